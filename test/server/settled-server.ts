import type { Server } from '../../src/server/server.js';
import type { Node } from '../../src/structs/index.js';
import { mockNode } from '../mock/factories.js';

/**
 * Waits for what a leader writes on its own when it takes office (the keyring's first root key),
 * so a test comparing indexes or digests is not raced by that write. A follower writes nothing.
 */
export async function settled(s: Server): Promise<Server> {
  if (s.isLeader()) await s.keyring.ensureActiveKey();
  return s;
}

/** Registers `count` mock nodes on `s`, 100 at a time (a blocking-query test's fleet); returns them in order. */
export async function registerMockNodes(s: Server, count: number): Promise<Node[]> {
  const nodes: Node[] = [];
  for (let i = 0; i < count; i += 100) {
    const batch = Array.from({ length: Math.min(100, count - i) }, () => mockNode());
    await Promise.all(batch.map((n) => s.registerNode(n)));
    nodes.push(...batch);
  }
  return nodes;
}
