import type { Server } from '../../src/server/server.js';

/**
 * Waits for what a leader writes on its own when it takes office (the keyring's first root key),
 * so a test comparing indexes or digests is not raced by that write. A follower writes nothing.
 */
export async function settled(s: Server): Promise<Server> {
  if (s.isLeader()) await s.keyring.ensureActiveKey();
  return s;
}
