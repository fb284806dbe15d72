/**
 * A client reviving terminal allocations: a node's client (its side played by this test, with
 * the node's own SecretID, through the internal HTTP route real clients use) reports a complete
 * and a failed allocation `running` again, to put load on its node outside any plan. The server
 * ignores those reports — the allocations stay terminal and the node's allocated CPU does not
 * grow — while a legitimate report in the same batch still lands, and the answer is a 200 (one
 * bad allocation does not fail a client's whole batch).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Allocation } from '../../src/structs/index.js';
import type { NodeUsage } from '../../src/http/api-views/node-usage-views.js';
import { call, runCli, startAgent, type AgentProcess } from '../integration/helpers/agent-process.js';
import { waitFor } from '../integration/helpers/client-agent.js';
import { killDataDirProcesses } from '../integration/helpers/processes.js';
import { mockNode } from '../mock/factories.js';

/** Three allocations of 500 MHz each; never rescheduled, so a failed one gets no replacement. */
const batchJob = `
job "revive" {
  datacenters = ["*"]
  type        = "batch"
  group "g" {
    count = 3
    reschedule {
      attempts  = 0
      unlimited = false
    }
    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/true"
      }
      resources {
        cpu    = 500
        memory = 16
      }
    }
  }
}`;

test('a client cannot revive its complete or failed allocations to add load to its node', async () => {
  const tmp = await mkdtemp('/tmp/cv-revive-');
  let server: AgentProcess | undefined;
  try {
    server = await startAgent({ roleArgs: ['-server'], dataDir: join(tmp, 's') });
    const s = server.address;
    const node = mockNode({ Name: 'reviver' });
    assert.equal((await call(s, 'PUT', '/v1/internal/node/register', node.SecretID, { Node: { ...node, Status: 'ready' } })).status, 200);
    const file = join(tmp, 'revive.hcl');
    await writeFile(file, batchJob);
    const run = await runCli(s, ['job', 'run', '-detach', file]);
    assert.equal(run.code, 0, run.stderr);
    const allocs = await waitFor('the three allocations on the node', async () => {
      const a = (await call<Allocation[]>(s, 'GET', `/v1/node/${node.ID}/allocations`, node.SecretID)).body;
      return Array.isArray(a) && a.length === 3 ? a : undefined;
    });
    const [a, b, c] = allocs.map((x) => x.ID) as [string, string, string];
    const report = (updates: [string, string][]) =>
      call(s, 'PUT', '/v1/internal/allocs/update', node.SecretID, { Allocs: updates.map(([ID, ClientStatus]) => ({ ID, NodeID: node.ID, ClientStatus, TaskStates: {} })) });
    const usage = async () => (await call<NodeUsage[]>(s, 'GET', '/v1/ui/topology/nodes')).body.find((n) => n.ID === node.ID)!;
    const status = async (id: string) => (await call<Allocation>(s, 'GET', `/v1/allocation/${id}`)).body.ClientStatus;

    // The honest reports: a completes, b fails, c runs. Only c holds CPU.
    assert.equal((await report([[a, 'complete'], [b, 'failed'], [c, 'running']])).status, 200);
    const before = await usage();
    assert.equal(before.Cpu.Allocated, 500);
    assert.equal(before.Allocations, 1);

    // The revival, alone and beside a legitimate report (c completing).
    assert.equal((await report([[a, 'running'], [b, 'running']])).status, 200);
    assert.equal((await report([[a, 'running'], [b, 'pending'], [c, 'complete']])).status, 200);
    assert.equal(await status(a), 'complete');
    assert.equal(await status(b), 'failed');
    assert.equal(await status(c), 'complete', 'the legitimate report of the batch landed');
    const after = await usage();
    assert.equal(after.Cpu.Allocated, 0, 'the node holds no CPU for terminal allocations');
    assert.equal(after.Allocations, 0);
    assert.match(server.output().stdout + server.output().stderr, /ignoring a client report that revives a terminal allocation/);
  } finally {
    await server?.stop().catch(() => undefined);
    if (server) await killDataDirProcesses(server.dataDir).catch(() => undefined);
    await rm(tmp, { recursive: true, force: true });
  }
});
