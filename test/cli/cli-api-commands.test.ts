import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { main } from '../../src/cli/main.js';
import type { Server } from '../../src/server/server.js';
import { placeJob, serviceJob, startServer } from '../http/real-server.js';
import { mockNode } from '../mock/factories.js';

/** A real server behind the real HTTP layer on a loopback port; `port` is the one it listens on. */
async function withApi(fn: (address: string, server: Server, port: number) => Promise<void>): Promise<void> {
  const sut = await startServer({ agent: { name: 'caravan', httpAddr: '127.0.0.1:4646' } });
  await sut.app.listen({ host: '127.0.0.1', port: 0 });
  const port = (sut.app.server.address() as { port: number }).port;
  sut.server.advertise(`127.0.0.1:${port}`);
  try {
    await fn(`http://127.0.0.1:${port}`, sut.server, port);
  } finally {
    await sut.close();
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
    await placeJob(server, serviceJob('web', 1));
    const list = await cli(address, ['job', 'status']);
    assert.equal(list.code, 0, list.err);
    assert.match(list.out, /^ID\s+Type\s+Priority\s+Status\s+Submit Date\nweb\s+service\s+50\s+running/);
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
    const node = mockNode();
    await server.registerNode(node);
    const dir = await mkdtemp(join(tmpdir(), 'caravan-cli-'));
    try {
      // max_parallel = 0: no deployment for the monitor to follow (no client runs the task here).
      await writeFile(join(dir, 'j.hcl'), 'job "j" {\n  datacenters = ["dc1"]\n  group "g" {\n    update {\n      max_parallel = 0\n    }\n    task "t" {\n      driver = "raw_exec"\n      config {\n        command = "/bin/true"\n      }\n    }\n  }\n}\n');
      const run = await cli(address, ['job', 'run', 'j.hcl'], dir);
      assert.equal(run.code, 0, run.err);
      const [alloc] = server.state.allocsByJob('default', 'j');
      assert.ok(alloc, 'the real scheduler placed the allocation');
      assert.match(run.out, new RegExp(`==> \\S+Z: Monitoring evaluation "${alloc.EvalID.slice(0, 8)}"`));
      assert.match(run.out, new RegExp(`Allocation "${alloc.ID.slice(0, 8)}" created: node "${node.ID.slice(0, 8)}", group "g"`));
      assert.match(run.out, /finished with status "complete"/);
      const detach = await cli(address, ['job', 'run', '-detach', 'j.hcl'], dir);
      assert.equal(detach.code, 0, detach.err);
      const evalId = /Evaluation ID: ([0-9a-f-]{36})/.exec(detach.out)?.[1];
      assert.ok(evalId && server.state.evalById(evalId), detach.out);
      const invalid = await cli(address, ['job', 'run', 'missing.hcl'], dir);
      assert.equal(invalid.code, 1);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

test('job run exits 2 when placement failed, explaining why', async () => {
  await withApi(async (address, server) => {
    // A node whose memory (after what it reserves) cannot hold the task's 300 MB.
    const small = mockNode();
    await server.registerNode({ ...small, NodeResources: { ...small.NodeResources, Memory: { MemoryMB: 400 } } });
    const dir = await mkdtemp(join(tmpdir(), 'caravan-cli-'));
    try {
      await writeFile(join(dir, 'j.hcl'), 'job "j" {\n  datacenters = ["dc1"]\n  group "g" {\n    update {\n      max_parallel = 0\n    }\n    task "t" {\n      driver = "raw_exec"\n      config {\n        command = "/bin/true"\n      }\n    }\n  }\n}\n');
      const run = await cli(address, ['job', 'run', 'j.hcl'], dir);
      assert.equal(run.code, 2, run.err + run.out);
      assert.match(run.out, /failed to place all allocations/);
      assert.match(run.out, /Dimension "memory" exhausted on 1 nodes/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

test('node, eval and alloc commands resolve ID prefixes', async () => {
  await withApi(async (address, server, port) => {
    const { node, allocs, evalId } = await placeJob(server, serviceJob('web', 1), mockNode({ ID: '11111111-2222-3333-4444-555555555555', Name: 'node-1' }));
    const nodeOut = await cli(address, ['node', 'status', '1111']);
    assert.equal(nodeOut.code, 0, nodeOut.err);
    assert.match(nodeOut.out, /Name\s+= node-1/);
    const elig = await cli(address, ['node', 'eligibility', '-disable', '1111']);
    assert.equal(elig.code, 0, elig.err);
    assert.equal(server.state.nodeById(node.ID)!.SchedulingEligibility, 'ineligible');
    const usage = await cli(address, ['node', 'eligibility', '1111']);
    assert.equal(usage.code, 2);
    const ev = await cli(address, ['eval', 'status', evalId.slice(0, 8)]);
    assert.equal(ev.code, 0, ev.err);
    assert.match(ev.out, /TriggeredBy\s+= job-register/);
    const alloc = await cli(address, ['alloc', 'status', allocs[0]!.ID.slice(0, 8)]);
    assert.equal(alloc.code, 0, alloc.err);
    assert.match(alloc.out, /Client Status\s+= pending/);
    const members = await cli(address, ['server', 'members']);
    assert.equal(members.code, 0, members.err);
    // The member's real address and port: Caravan's servers are reached over HTTP.
    assert.match(members.out, new RegExp(`caravan\\.global\\s+127\\.0\\.0\\.1\\s+${port}\\s+alive\\s+true`));
  });
});

test('an unreachable agent is exit 1 with a clear error', async () => {
  const res = await cli('http://127.0.0.1:9', ['job', 'status']);
  assert.equal(res.code, 1);
  assert.match(res.err, /^Error querying jobs: cannot reach server at http:\/\/127\.0\.0\.1:9 \(GET \/v1\/jobs\): /);
});
