/**
 * The node simulator at small scale against a real server: 24 real clients in this process
 * register with their own identities, datacenters, pools and racks, a system job runs on every
 * one of them through the mock driver, and no simulated node built anything on disk (no state
 * DB, no allocation directories) — the costs the simulator leaves out per node.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { api, startAgent } from './helpers/agent-process.js';
import { NodeSimulator } from '../../bench/nodesim/node-simulator.js';

const NODES = 24;

interface NodeStub {
  ID: string;
  Name: string;
  Status: string;
  Datacenter: string;
  NodePool: string;
}

async function until(what: string, probe: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

test('simulated nodes register with their own identity and spread, and run a system job everywhere, with nothing on disk', async () => {
  const server = await startAgent({ roleArgs: ['-server'], rawExec: false, extraArgs: ['-log-level', 'warn'], readyTimeoutMs: 60_000 });
  const root = mkdtempSync(join(tmpdir(), 'caravan-nodesim-test-'));
  let sim: NodeSimulator | null = null;
  try {
    sim = await NodeSimulator.start({ servers: [server.address.replace('http://', '')], nodes: NODES, dataDir: root, maxSockets: 4 });
    let nodes: NodeStub[] = [];
    await until('every node ready', async () => {
      nodes = (await api<NodeStub[]>(server.address, 'GET', '/v1/nodes')).body;
      return nodes.filter((n) => n.Status === 'ready').length === NODES;
    });
    assert.equal(new Set(nodes.map((n) => n.ID)).size, NODES, 'each node has its own ID');
    assert.deepEqual([...new Set(nodes.map((n) => n.Datacenter))].sort(), ['dc1', 'dc2', 'dc3']);
    assert.deepEqual([...new Set(nodes.map((n) => n.NodePool))].sort(), ['default', 'edge']);
    const one = (await api<{ Meta: Record<string, string>; NodeResources: { Cpu: { CpuShares: number } } }>(server.address, 'GET', `/v1/node/${nodes[0]!.ID}`)).body;
    assert.match(one.Meta.rack ?? '', /^r\d+$/);
    // Three machine sizes, none of them the real host's.
    const sizes = new Set<number>();
    for (const n of nodes) sizes.add((await api<{ NodeResources: { Cpu: { CpuShares: number } } }>(server.address, 'GET', `/v1/node/${n.ID}`)).body.NodeResources.Cpu.CpuShares);
    assert.equal(sizes.size, 3);

    const job = {
      Job: {
        ID: 'sim-system',
        Name: 'sim-system',
        Type: 'system',
        Datacenters: ['dc1', 'dc2', 'dc3'],
        NodePool: 'all',
        TaskGroups: [{ Name: 'g', Count: 1, Tasks: [{ Name: 't', Driver: 'mock_driver', Config: { run_for: '1h' }, Resources: { CPU: 10, MemoryMB: 10 } }] }],
      },
    };
    assert.equal((await api(server.address, 'PUT', '/v1/jobs', job)).status, 200);
    await until('the system job running on every node', async () => {
      const s = (await api<{ Summary: { g: { Running: number } } }>(server.address, 'GET', '/v1/job/sim-system/summary')).body;
      return s.Summary.g.Running === NODES;
    });
    assert.equal(sim.runningAllocs(), NODES, 'the clients run one allocation each');
    // The clients' data dirs stay empty: no state DB, no identity files, no allocation tree.
    for (const name of readdirSync(root)) assert.deepEqual(readdirSync(join(root, name)), [], `${name}'s data dir`);
    // Ordinary requests queued for the 4-socket pool; each node's blocking query has its own socket.
    const stats = sim.poolStats();
    assert.ok(stats.shortSockets <= 4, `short pool holds ${stats.shortSockets} sockets`);
  } finally {
    await sim?.stop();
    await server.stop();
    await server.cleanup();
    rmSync(root, { recursive: true, force: true });
  }
});
