import { test } from 'node:test';
import assert from 'node:assert/strict';
import { main } from '../../src/cli/main.js';
import type { Server } from '../../src/server/server.js';
import type { Job, UpdateStrategy } from '../../src/structs/index.js';
import { placeJob, serviceJob, startServer, waitForState } from '../http/real-server.js';

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

const S = 1_000_000_000;
const UPDATE: UpdateStrategy = { Stagger: 30 * S, MaxParallel: 5, HealthCheck: 'task_states', MinHealthyTime: 10 * S, HealthyDeadline: 300 * S, ProgressDeadline: 600 * S, AutoRevert: false, AutoPromote: false, Canary: 0 };

function rolled(count: number, maxParallel: number): Job {
  const job = serviceJob('web', count);
  return { ...job, TaskGroups: [{ ...job.TaskGroups[0]!, Update: { ...UPDATE, MaxParallel: maxParallel } }] };
}

const TIME = '\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ';

test('job scale tells created from modified allocations, as Nomad, in one timestamp format', async () => {
  await withApi(async (address, server) => {
    await placeJob(server, rolled(3, 0));
    const res = await cli(address, ['job', 'scale', 'web', '5']);
    assert.equal(res.code, 0, res.err);
    assert.equal(res.out.match(/Allocation "[0-9a-f]{8}" created: node "[0-9a-f]{8}", group "web"/g)?.length, 2, res.out);
    assert.equal(res.out.match(/Allocation "[0-9a-f]{8}" modified: node "[0-9a-f]{8}", group "web"/g)?.length, 3, res.out);
    // Every line is stamped in Nomad's formatTime: whole seconds, no fraction.
    assert.match(res.out, new RegExp(`^==> ${TIME}: Monitoring evaluation "[0-9a-f]{8}"\\n {4}${TIME}: Evaluation triggered by job "web"\\n`));
    assert.match(res.out, new RegExp(`\\n==> ${TIME}: Evaluation "[0-9a-f]{8}" finished with status "complete"\\n$`));
    assert.doesNotMatch(res.out, /\.\d{3}Z/);
  });
});

test('job scale follows the deployment it starts; -detach prints the evaluation and returns', async () => {
  await withApi(async (address, server) => {
    await placeJob(server, rolled(2, 5));
    const scaling = cli(address, ['job', 'scale', 'web', 'web', '4']);
    // The allocations never report health here: fail the new deployment so the monitor sees it end.
    await waitForState(server, () => server.state.deploymentsByJob('default', 'web').some((d) => d.JobVersion === 1 && d.Status === 'running'), 'the scale deployment');
    const d = server.state.deploymentsByJob('default', 'web').find((x) => x.JobVersion === 1)!;
    const fail = await fetch(`${address}/v1/deployment/fail/${d.ID}`, { method: 'PUT', body: JSON.stringify({ DeploymentID: d.ID }) });
    assert.equal(fail.status, 200, await fail.text());
    const res = await scaling;
    assert.equal(res.code, 1, res.out + res.err);
    assert.match(res.out, new RegExp(`Evaluation within deployment: "${d.ID.slice(0, 8)}"`));
    assert.match(res.out, new RegExp(`==> ${TIME}: Monitoring deployment "${d.ID.slice(0, 8)}"`));
    assert.match(res.out, new RegExp(`! Deployment "${d.ID.slice(0, 8)}" failed`));

    const detached = await cli(address, ['job', 'scale', '-detach', 'web', '5']);
    assert.equal(detached.code, 0, detached.err);
    assert.match(detached.out, /^[0-9a-f-]{36}\n$/);
  });
});
