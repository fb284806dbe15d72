import { test } from 'node:test';
import assert from 'node:assert/strict';
import { main } from '../../src/cli/main.js';
import { createHttpServer } from '../../src/http/http-server.js';
import { defaultJobAdmission } from '../../src/http/job-admission.js';
import type { Deployment, DeploymentState } from '../../src/structs/index.js';
import { FakeServerApi, mockJob } from '../http/fake-server-api.js';

async function withApi(fn: (address: string, server: FakeServerApi) => Promise<void>): Promise<void> {
  const server = new FakeServerApi();
  const app = createHttpServer({ server, admission: defaultJobAdmission });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const port = (app.server.address() as { port: number }).port;
  try {
    await fn(`http://127.0.0.1:${port}`, server);
  } finally {
    await app.close();
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

function groupState(o: Partial<DeploymentState>): DeploymentState {
  return {
    AutoRevert: false, AutoPromote: false, ProgressDeadline: 600e9, RequireProgressBy: null, Promoted: false,
    PlacedCanaries: null, DesiredCanaries: 0, DesiredTotal: 0, PlacedAllocs: 0, HealthyAllocs: 0, UnhealthyAllocs: 0, ...o,
  };
}

function deployment(o: Partial<Deployment>): Deployment {
  return {
    ID: 'dddddddd-0000-0000-0000-000000000001', Namespace: 'default', JobID: 'web', JobVersion: 0, JobModifyIndex: 1,
    JobSpecModifyIndex: 1, JobCreateIndex: 1, IsMultiregion: false, TaskGroups: {}, Status: 'running',
    StatusDescription: 'Deployment is running', CreateIndex: 10, ModifyIndex: 10, ...o,
  };
}

test('job status shows the latest deployment of a service job', async () => {
  await withApi(async (address, server) => {
    server.putJob(mockJob({ ID: 'web', TaskGroups: [] }));
    // An older deployment is not the one shown.
    server.deploymentsById.set('old', deployment({ ID: 'eeeeeeee-0000-0000-0000-000000000001', Status: 'successful', StatusDescription: 'old one', CreateIndex: 5 }));
    server.deploymentsById.set('new', deployment({
      TaskGroups: { web: groupState({ DesiredTotal: 3, PlacedAllocs: 2, HealthyAllocs: 1, UnhealthyAllocs: 1, RequireProgressBy: '2026-11-21T12:00:00Z' }) },
    }));
    const res = await cli(address, ['job', 'status', 'web']);
    assert.equal(res.code, 0, res.err);
    assert.match(res.out, /\n\nLatest Deployment\nID\s+= dddddddd\nStatus\s+= running\nDescription\s+= Deployment is running\n/);
    assert.match(res.out, /\nDeployed\nTask Group\s+Desired\s+Placed\s+Healthy\s+Unhealthy\s+Progress Deadline\nweb\s+3\s+2\s+1\s+1\s+2026-11-21T12:00:00Z\n/);
    assert.doesNotMatch(res.out, /old one/);
    // Between the summary and the allocations, as Nomad orders it.
    assert.ok(res.out.indexOf('Latest Deployment') < res.out.indexOf('Allocations'));
    const json = await cli(address, ['job', 'status', '-json', 'web']);
    assert.equal(JSON.parse(json.out).LatestDeployment.ID, 'dddddddd-0000-0000-0000-000000000001');
  });
});

test('job status has no deployment section without a deployment or for a batch job', async () => {
  await withApi(async (address, server) => {
    server.putJob(mockJob({ ID: 'web', TaskGroups: [] }));
    server.putJob(mockJob({ ID: 'b', Type: 'batch', TaskGroups: [] }));
    server.deploymentsById.set('b', deployment({ JobID: 'b' }));
    for (const id of ['web', 'b']) {
      const res = await cli(address, ['job', 'status', id]);
      assert.equal(res.code, 0, res.err);
      assert.doesNotMatch(res.out, /Latest Deployment/);
      assert.match(res.out, /Allocations\n/);
    }
  });
});
