import { test } from 'node:test';
import assert from 'node:assert/strict';
import { main } from '../../src/cli/main.js';
import type { Server } from '../../src/server/server.js';
import type { Job, UpdateStrategy } from '../../src/structs/index.js';
import { placeJob, serviceJob, startServer, waitForState } from '../http/real-server.js';
import { mockBatchJob } from '../mock/factories.js';

async function withApi(fn: (address: string, server: Server) => Promise<void>): Promise<void> {
  const sut = await startServer();
  await sut.app.listen({ host: '127.0.0.1', port: 0 });
  const port = (sut.app.server.address() as { port: number }).port;
  try {
    await fn(`http://127.0.0.1:${port}`, sut.server);
  } finally {
    await sut.close();
  }
}

const S = 1_000_000_000;
const UPDATE: UpdateStrategy = { Stagger: 30 * S, MaxParallel: 2, HealthCheck: 'task_states', MinHealthyTime: 10 * S, HealthyDeadline: 300 * S, ProgressDeadline: 600 * S, AutoRevert: false, AutoPromote: false, Canary: 0 };

/** Service job "web" of 3 allocations rolled out 2 at a time; `meta` makes a new version. */
function rolledJob(meta: string): Job {
  const job = serviceJob('web', 3, { Meta: { v: meta } });
  return { ...job, TaskGroups: [{ ...job.TaskGroups[0]!, Update: UPDATE }] };
}

async function cli(address: string, args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await main(['node', 'caravan', ...args], {
    stdout: { write: (s: string) => (out += s) },
    stderr: { write: (s: string) => (err += s) },
    env: { CARAVAN_ADDR: address },
    cwd: process.cwd(),
  });
  return { code, out, err };
}

test('job status shows the latest deployment of a service job', async () => {
  await withApi(async (address, server) => {
    await placeJob(server, rolledJob('1'));
    const [old] = server.state.deploymentsByJob('default', 'web');
    assert.ok(old, 'version 0 rolled out through a deployment');
    // Version 1: its deployment replaces the first, which is not the one shown.
    const res1 = await server.registerJob(rolledJob('2'));
    await waitForState(server, () => server.state.evalById(res1.evalId)?.Status === 'complete', 'the update eval');
    const latest = server.state.deploymentsByJob('default', 'web').find((d) => d.ID !== old.ID)!;
    assert.equal(latest.Status, 'running');
    const res = await cli(address, ['job', 'status', 'web']);
    assert.equal(res.code, 0, res.err);
    assert.match(res.out, new RegExp(`\\n\\nLatest Deployment\\nID\\s+= ${latest.ID.slice(0, 8)}\\nStatus\\s+= running\\nDescription\\s+= Deployment is running\\n`));
    assert.match(res.out, /\nDeployed\nTask Group\s+Desired\s+Placed\s+Healthy\s+Unhealthy\s+Progress Deadline\nweb\s+3\s+2\s+0\s+0\s+\S+\n/);
    assert.doesNotMatch(res.out, new RegExp(`= ${old.ID.slice(0, 8)}`));
    // Between the summary and the allocations, as Nomad orders it.
    assert.ok(res.out.indexOf('Latest Deployment') < res.out.indexOf('Allocations'));
    const json = await cli(address, ['job', 'status', '-json', 'web']);
    assert.equal(JSON.parse(json.out).LatestDeployment.ID, latest.ID);
  });
});

test('job status has no deployment section without a deployment or for a batch job', async () => {
  await withApi(async (address, server) => {
    // max_parallel 0: a service job that rolls out without a deployment.
    const plain = serviceJob('web', 1);
    await placeJob(server, { ...plain, TaskGroups: [{ ...plain.TaskGroups[0]!, Update: { ...UPDATE, MaxParallel: 0 } }] });
    await placeJob(server, mockBatchJob({ ID: 'b', Name: 'b', TaskGroups: [{ ...mockBatchJob().TaskGroups[0]!, Count: 1 }] }));
    assert.deepEqual(server.state.deploymentsByJob('default', 'web'), []);
    for (const id of ['web', 'b']) {
      const res = await cli(address, ['job', 'status', id]);
      assert.equal(res.code, 0, res.err);
      assert.doesNotMatch(res.out, /Latest Deployment/);
      assert.match(res.out, /Allocations\n/);
    }
  });
});
