import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { api, startAgent } from '../integration/helpers/agent-process.js';
import { waitFor } from '../integration/helpers/client-agent.js';
import { SimulatorThreads, splitNodes } from '../../bench/nodesim/simulator-threads.js';

interface NodeStub {
  ID: string;
  Name: string;
  Status: string;
}

interface AllocStub {
  NodeID: string;
  ClientStatus: string;
}

test('splitNodes: every node index in exactly one thread, as even as can be', () => {
  assert.deepEqual(splitNodes(7, 3), [{ firstIndex: 0, nodes: 3 }, { firstIndex: 3, nodes: 2 }, { firstIndex: 5, nodes: 2 }]);
  assert.deepEqual(splitNodes(2, 4), [{ firstIndex: 0, nodes: 1 }, { firstIndex: 1, nodes: 1 }]);
  assert.deepEqual(splitNodes(10, 1), [{ firstIndex: 0, nodes: 10 }]);
});

// 50 real clients over 2 worker threads against a real server: each node registers once (no node
// is run by both threads, none is left out), runs the system job's allocation, and what the main
// thread collects by message — requests by kind, running allocations, warnings — adds up.
test('50 simulated nodes over 2 threads: each registers once and runs its allocation; the threads\' counters add up', async () => {
  const agent = await startAgent({ roleArgs: ['-server'], rawExec: false });
  const dir = mkdtempSync(join(tmpdir(), 'simulator-threads-'));
  let sim: SimulatorThreads | null = null;
  try {
    const a = agent.address;
    sim = await SimulatorThreads.start({ servers: [a.replace(/^http:\/\//, '')], nodes: 50, threads: 2, dataDir: dir });
    assert.equal(sim.size, 2);
    const nodes = await waitFor('50 nodes ready', async () => {
      const all = (await api<NodeStub[]>(a, 'GET', '/v1/nodes')).body;
      return all.filter((n) => n.Status === 'ready').length === 50 ? all : undefined;
    }, 60_000, 250);
    // Nodes sim-00000 … sim-00049, each once, each its own ID.
    assert.deepEqual(nodes.map((n) => n.Name).sort(), Array.from({ length: 50 }, (_, i) => `sim-${String(i).padStart(5, '0')}`));
    assert.equal(new Set(nodes.map((n) => n.ID)).size, 50);

    const job = { Job: { ID: 'sys', Name: 'sys', Type: 'system', Datacenters: ['*'], NodePool: 'all', TaskGroups: [{ Name: 'g', Count: 1, Tasks: [{ Name: 't', Driver: 'mock_driver', Config: { run_for: '1h' }, Resources: { CPU: 10, MemoryMB: 10 } }] }] } };
    assert.equal((await api(a, 'PUT', '/v1/jobs', job)).status, 200);
    await waitFor('the system job running on all 50', async () => {
      const allocs = (await api<AllocStub[]>(a, 'GET', '/v1/job/sys/allocations')).body;
      return allocs.filter((x) => x.ClientStatus === 'running').length === 50 || undefined;
    }, 60_000, 250);
    const allocs = (await api<AllocStub[]>(a, 'GET', '/v1/job/sys/allocations')).body;
    assert.equal(new Set(allocs.map((x) => x.NodeID)).size, 50, 'one allocation a node');

    const s = await waitFor('every thread\'s clients see their allocation running', async () => {
      const st = await sim!.stats();
      return st.runningAllocs === 50 ? st : undefined;
    }, 20_000, 100);
    assert.deepEqual(s.threads.map((t) => t.nodes), [25, 25]);
    // Each thread ran its own 25: one registration each (no registration failed), one allocation running each.
    const warnings = sim.warnings();
    assert.equal(warnings['registering node failed; retrying'] ?? 0, 0, JSON.stringify(warnings));
    assert.deepEqual(s.threads.map((t) => t.pool.requests.register), [25, 25]);
    assert.deepEqual(s.threads.map((t) => t.runningAllocs), [25, 25]);
    // Every node pulled its allocation at least once, from its own thread.
    for (const t of s.threads) assert.ok(t.pool.requests.fetchAllocs >= 25, JSON.stringify(t.pool.requests));
    // The totals are the threads' sums, kind by kind.
    for (const k of Object.keys(s.pool.requests) as (keyof typeof s.pool.requests)[]) {
      assert.equal(s.pool.requests[k], s.threads[0]!.pool.requests[k] + s.threads[1]!.pool.requests[k], k);
    }
    assert.equal(s.pool.blockingSockets, s.threads[0]!.pool.blockingSockets + s.threads[1]!.pool.blockingSockets);
    assert.ok(s.heapUsedMB > 0);

    // The server goes away: every node's held watch fails, in both threads, and the main thread
    // sees each thread's warnings summed.
    await agent.kill();
    const failed = await waitFor('every node\'s watch failure counted', () => {
      const n = sim!.warnings()['watching allocations failed; retrying'] ?? 0;
      return n >= 50 ? n : undefined;
    }, 20_000, 100);
    assert.ok(failed >= 50);

    await sim.stop();
    await assert.rejects(sim.stats(), /simulator thread exited/);
    sim = null;
  } finally {
    await sim?.stop();
    await agent.kill();
    await agent.cleanup();
    rmSync(dir, { recursive: true, force: true });
  }
});
