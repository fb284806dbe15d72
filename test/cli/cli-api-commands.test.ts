import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { main } from '../../src/cli/main.js';
import { createHttpServer } from '../../src/http/http-server.js';
import { defaultJobAdmission } from '../../src/http/job-admission.js';
import { FakeServerApi, mockAlloc, mockEval, mockJob, mockNode } from '../http/fake-server-api.js';

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

async function cli(address: string, args: string[], cwd = process.cwd()): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await main(['node', 'caravan', ...args], {
    stdout: { write: (s: string) => (out += s) },
    stderr: { write: (s: string) => (err += s) },
    env: { CARAVAN_ADDR: address },
    cwd,
  });
  return { code, out, err };
}

test('job status lists jobs and shows one by prefix; -json prints API JSON', async () => {
  await withApi(async (address, server) => {
    server.putJob(mockJob({ ID: 'web', TaskGroups: [] }));
    server.putAlloc(mockAlloc({ JobID: 'web' }));
    const list = await cli(address, ['job', 'status']);
    assert.equal(list.code, 0, list.err);
    assert.match(list.out, /^ID\s+Type\s+Priority\s+Status\s+Submit Date\nweb\s+service\s+50\s+pending/);
    const one = await cli(address, ['job', 'status', 'we']);
    assert.equal(one.code, 0, one.err);
    assert.match(one.out, /ID\s+= web/);
    assert.match(one.out, /Allocations\nID\s+Node ID\s+Task Group/);
    const json = await cli(address, ['job', 'status', '-json']);
    assert.equal(JSON.parse(json.out)[0].ID, 'web');
    const none = await cli(address, ['job', 'status', 'zzz']);
    assert.equal(none.code, 1);
    assert.match(none.err, /No job\(s\) with prefix or id "zzz" found/);
  });
});

test('job run registers and monitors; -detach prints the eval', async () => {
  await withApi(async (address, server) => {
    const dir = await mkdtemp(join(tmpdir(), 'caravan-cli-'));
    try {
      await writeFile(join(dir, 'j.hcl'), 'job "j" {\n  datacenters = ["dc1"]\n  group "g" {\n    task "t" {\n      driver = "raw_exec"\n      config {\n        command = "/bin/true"\n      }\n    }\n  }\n}\n');
      // The fake never processes evals: mark them complete as soon as they appear.
      const origRegister = server.registerJob.bind(server);
      server.registerJob = async (job, opts) => {
        const res = await origRegister(job, opts);
        server.putEval({ ...server.evalsById.get(res.evalId)!, Status: 'complete' });
        server.putAlloc(mockAlloc({ ID: 'cccccccc-0000-0000-0000-000000000001', EvalID: res.evalId, JobID: 'j', TaskGroup: 'g' }));
        return res;
      };
      const run = await cli(address, ['job', 'run', 'j.hcl'], dir);
      assert.equal(run.code, 0, run.err);
      assert.match(run.out, /==> Monitoring evaluation "eeeeeeee"/);
      assert.match(run.out, /Allocation "cccccccc" created: node "11111111", group "g"/);
      assert.match(run.out, /finished with status "complete"/);
      const detach = await cli(address, ['job', 'run', '-detach', 'j.hcl'], dir);
      assert.equal(detach.code, 0, detach.err);
      assert.match(detach.out, /Evaluation ID: eeeeeeee-/);
      const invalid = await cli(address, ['job', 'run', 'missing.hcl'], dir);
      assert.equal(invalid.code, 1);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

test('job run exits 2 when placement failed, explaining why', async () => {
  await withApi(async (address, server) => {
    const dir = await mkdtemp(join(tmpdir(), 'caravan-cli-'));
    try {
      await writeFile(join(dir, 'j.hcl'), 'job "j" {\n  datacenters = ["dc1"]\n  group "g" {\n    task "t" {\n      driver = "raw_exec"\n      config {\n        command = "/bin/true"\n      }\n    }\n  }\n}\n');
      const origRegister = server.registerJob.bind(server);
      server.registerJob = async (job, opts) => {
        const res = await origRegister(job, opts);
        const metric = { NodesEvaluated: 1, NodesFiltered: 0, NodesInPool: 1, NodesAvailable: { dc1: 1 }, ClassFiltered: null, ConstraintFiltered: null, NodesExhausted: 1, ClassExhausted: null, DimensionExhausted: { memory: 1 }, QuotaExhausted: null, ResourcesExhausted: null, Scores: null, ScoreMetaData: null, AllocationTime: 0, CoalescedFailures: 0 };
        server.putEval({ ...server.evalsById.get(res.evalId)!, Status: 'complete', FailedTGAllocs: { g: metric }, BlockedEval: 'bbbbbbbb-0000' });
        return res;
      };
      const run = await cli(address, ['job', 'run', 'j.hcl'], dir);
      assert.equal(run.code, 2, run.err);
      assert.match(run.out, /failed to place all allocations/);
      assert.match(run.out, /Dimension "memory" exhausted on 1 nodes/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

test('node, eval and alloc commands resolve ID prefixes', async () => {
  await withApi(async (address, server) => {
    server.putNode(mockNode());
    server.putEval(mockEval());
    server.putAlloc(mockAlloc());
    const node = await cli(address, ['node', 'status', '1111']);
    assert.equal(node.code, 0, node.err);
    assert.match(node.out, /Name\s+= node-1/);
    const elig = await cli(address, ['node', 'eligibility', '-disable', '1111']);
    assert.equal(elig.code, 0, elig.err);
    assert.equal(server.nodesById.get('11111111-2222-3333-4444-555555555555')!.SchedulingEligibility, 'ineligible');
    const usage = await cli(address, ['node', 'eligibility', '1111']);
    assert.equal(usage.code, 2);
    const ev = await cli(address, ['eval', 'status', 'eeee']);
    assert.equal(ev.code, 0, ev.err);
    assert.match(ev.out, /TriggeredBy\s+= job-register/);
    const alloc = await cli(address, ['alloc', 'status', 'aaaa']);
    assert.equal(alloc.code, 0, alloc.err);
    assert.match(alloc.out, /Client Status\s+= pending/);
    const members = await cli(address, ['server', 'members']);
    assert.equal(members.code, 0, members.err);
    assert.match(members.out, /caravan\.global\s+127\.0\.0\.1\s+4648\s+alive\s+true/);
  });
});

test('an unreachable agent is exit 1 with a clear error', async () => {
  const res = await cli('http://127.0.0.1:9', ['job', 'status']);
  assert.equal(res.code, 1);
  assert.match(res.err, /^Error querying jobs: cannot reach server at http:\/\/127\.0\.0\.1:9 \(GET \/v1\/jobs\): /);
});
