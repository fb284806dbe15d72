/**
 * `/v1/operator/snapshot` and `caravan operator snapshot save|inspect|restore` through a real
 * dev agent (server and client): the saved file holds the whole state; after the state changed
 * (jobs registered and stopped, variables, namespaces, node pools, the scheduler configuration)
 * restoring it brings back exactly the saved state, the leader's duties run on it (a new job is
 * placed), and a restart of the agent keeps it. Damaged, cut-off and other-format files are
 * refused with a 400 naming the problem and change nothing.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { api, runCli, startAgent, type AgentProcess } from './helpers/agent-process.js';
import { runJob, waitFor, waitRunning } from './helpers/client-agent.js';
import { sleepJobHcl } from './helpers/sleep-job.js';

interface Listed {
  ID: string;
  Version?: number;
  Name?: string;
  Path?: string;
}

/** What must come back from a restore, as the API lists it. */
async function observable(a: string): Promise<Record<string, unknown>> {
  const jobs = (await api<Listed[]>(a, 'GET', '/v1/jobs?namespace=*')).body.map((j) => `${j.ID}@${j.Version}`).sort();
  const vars = (await api<Listed[]>(a, 'GET', '/v1/vars?namespace=*')).body.map((v) => v.Path).sort();
  const namespaces = (await api<Listed[]>(a, 'GET', '/v1/namespaces')).body.map((n) => n.Name).sort();
  const pools = (await api<Listed[]>(a, 'GET', '/v1/node/pools')).body.map((p) => p.Name).sort();
  const nodes = (await api<Listed[]>(a, 'GET', '/v1/nodes')).body.map((n) => n.ID).sort();
  const sched = (await api<{ SchedulerConfig: { SchedulerAlgorithm: string } }>(a, 'GET', '/v1/operator/scheduler/configuration')).body.SchedulerConfig.SchedulerAlgorithm;
  return { jobs, vars, namespaces, pools, nodes, sched };
}

async function ids(a: string, path: string): Promise<string[]> {
  return (await api<Listed[]>(a, 'GET', path)).body.map((x) => x.ID).sort();
}

async function putRaw(a: string, body: Buffer): Promise<{ status: number; text: string }> {
  const res = await fetch(`${a}/v1/operator/snapshot`, { method: 'PUT', body: new Uint8Array(body) });
  return { status: res.status, text: await res.text() };
}

test('operator snapshot: save, change, restore the whole state; refused files change nothing; a restart keeps it', async () => {
  const tmp = await mkdtemp(join(tmpdir(), 'caravan-it-snap-'));
  const dataDir = await mkdtemp('/tmp/cv-');
  let agent: AgentProcess | undefined = await startAgent({ roleArgs: ['-dev'], dataDir });
  try {
    const a = agent.address;
    await runJob(a, tmp, 'kept', sleepJobHcl('kept'));
    await waitRunning(a, 'kept', 1);
    assert.equal((await api(a, 'PUT', '/v1/namespace/snapns', { Name: 'snapns' })).status, 200);
    assert.equal((await api(a, 'PUT', '/v1/var/snap/v', { Items: { k: 'v' } })).status, 200);
    assert.equal((await api(a, 'PUT', '/v1/node/pool/snappool', { Name: 'snappool' })).status, 200);
    assert.equal((await api(a, 'PUT', '/v1/operator/scheduler/configuration', { SchedulerAlgorithm: 'spread' })).status, 200);

    const file = join(tmp, 'backup.snap');
    const saved = await runCli(a, ['operator', 'snapshot', 'save', file]);
    assert.equal(saved.code, 0, saved.stderr);
    assert.match(saved.stdout, new RegExp(`State file written to ${file}`));
    const before = await observable(a);
    const allocsBefore = await ids(a, '/v1/allocations');
    const evalsBefore = await ids(a, '/v1/evaluations');
    assert.equal(allocsBefore.length, 1);

    // inspect: Nomad's fields, then a count per kind of object.
    const inspect = await runCli(a, ['operator', 'snapshot', 'inspect', file]);
    assert.equal(inspect.code, 0, inspect.stderr);
    for (const field of ['ID', 'Size', 'Index', 'Term', 'Version']) assert.match(inspect.stdout, new RegExp(`^${field}\\s+= \\S+`, 'm'));
    assert.match(inspect.stdout, /^Type\s+Count\s+Size$/m);
    assert.match(inspect.stdout, /^Job\s+1\s+/m);
    assert.match(inspect.stdout, /^Namespace\s+2\s+/m);
    assert.match(inspect.stdout, /^Variables\s+1\s+/m);
    assert.match(inspect.stdout, /^Total\s+-\s+\d/m);
    const json = JSON.parse((await runCli(a, ['operator', 'snapshot', 'inspect', '-json', file])).stdout) as { Meta: { Index: number; Version: number }; Stats: { Name: string; Count: number }[] };
    assert.ok(json.Meta.Index > 0);
    assert.equal(json.Meta.Version, 3);
    assert.equal(json.Stats.find((s) => s.Name === 'Alloc')?.Count, allocsBefore.length);

    // Change everything.
    await runJob(a, tmp, 'added', sleepJobHcl('added'));
    const addedAllocs = await waitRunning(a, 'added', 1);
    assert.equal((await runCli(a, ['job', 'stop', '-detach', 'kept'])).code, 0);
    assert.ok((await api(a, 'DELETE', '/v1/var/snap/v')).status < 300);
    assert.equal((await api(a, 'PUT', '/v1/var/other/v', { Items: { k: 'x' } })).status, 200);
    assert.equal((await api(a, 'PUT', '/v1/namespace/otherns', { Name: 'otherns' })).status, 200);
    assert.ok((await api(a, 'DELETE', '/v1/node/pool/snappool')).status < 300);
    assert.equal((await api(a, 'PUT', '/v1/operator/scheduler/configuration', { SchedulerAlgorithm: 'binpack' })).status, 200);
    const changed = await observable(a);
    assert.notDeepEqual(changed, before);

    // Refused files: cut off, damaged, not gzip, gzip of something else, an unknown format.
    const bytes = await readFile(file);
    const lines = gunzipSync(bytes).toString('utf8');
    const header = JSON.parse(lines.slice(0, lines.indexOf('\n'))) as Record<string, unknown>;
    const future = gzipSync(Buffer.from(`${JSON.stringify({ ...header, format: 99 })}${lines.slice(lines.indexOf('\n'))}`));
    const flipped = Buffer.from(bytes);
    flipped[Math.floor(flipped.length / 2)]! ^= 0xff;
    const dropped = gzipSync(Buffer.from(lines.split('\n').filter((l) => !l.startsWith('{"t":"jobs"')).join('\n')));
    const refusals: [string, Buffer, RegExp][] = [
      ['cut off', bytes.subarray(0, Math.floor(bytes.length / 2)), /gzip|cut|end/i],
      ['damaged', flipped, /gzip|check|JSON|snapshot/i],
      ['not gzip', Buffer.from('hello, not a snapshot'), /gzip/i],
      ['another format', gzipSync(Buffer.from('meta.json\0\0\0 a tar archive')), /not a Caravan snapshot/],
      ['a newer format', future, /format: unsupported version 99/],
      ['rows dropped', dropped, /jobs: 0 rows, header says 1/],
      ['empty', Buffer.alloc(0), /empty/],
    ];
    for (const [what, body, reason] of refusals) {
      const r = await putRaw(a, body);
      assert.equal(r.status, 400, `${what}: ${r.text}`);
      assert.match(r.text, reason, what);
    }
    // A file that cannot be read or is no snapshot is an error of the run (exit 1), as Nomad's.
    const cli = await runCli(a, ['operator', 'snapshot', 'restore', join(tmp, 'missing.snap')]);
    assert.equal(cli.code, 1, cli.stderr);
    assert.match(cli.stderr, /^Error opening snapshot file: .*missing\.snap/);
    await writeFile(join(tmp, 'junk.snap'), 'not a snapshot');
    for (const verb of ['restore', 'inspect']) {
      const junk = await runCli(a, ['operator', 'snapshot', verb, join(tmp, 'junk.snap')]);
      assert.equal(junk.code, 1, `${verb}: ${junk.stderr}`);
      assert.match(junk.stderr, /^Error verifying snapshot: .*junk\.snap: /, verb);
    }
    assert.deepEqual(await observable(a), changed, 'refused restores changed nothing');

    // Restore through the CLI: the saved state is back, exactly.
    const restored = await runCli(a, ['operator', 'snapshot', 'restore', file]);
    assert.equal(restored.code, 0, restored.stderr);
    assert.match(restored.stdout, /Snapshot Restored/);
    assert.deepEqual(await observable(a), before);
    const allocsAfter = await ids(a, '/v1/allocations');
    for (const id of allocsBefore) assert.ok(allocsAfter.includes(id), `saved alloc ${id} restored`);
    for (const s of addedAllocs) assert.ok(!allocsAfter.includes(s.ID), 'an alloc placed after the save is gone');
    const evalsAfter = await ids(a, '/v1/evaluations');
    for (const id of evalsBefore) assert.ok(evalsAfter.includes(id), `saved eval ${id} restored`);
    assert.equal((await api<{ Items: Record<string, string> }>(a, 'GET', '/v1/var/snap/v')).body.Items.k, 'v');
    assert.equal((await api(a, 'GET', '/v1/var/other/v')).status, 404);

    // Indexes only move forward: the restore's index is above every index answered before.
    const jobsAnswer = await api(a, 'GET', '/v1/jobs');
    assert.ok(jobsAnswer.index > json.Meta.Index, `jobs index ${jobsAnswer.index} after the restore, snapshot at ${json.Meta.Index}`);

    // The leader runs on the restored state: a new job is placed.
    await runJob(a, tmp, 'after', sleepJobHcl('after'));
    await waitRunning(a, 'after', 1);
    // The client tells the restored state what really runs: the alloc of 'kept' it stopped after
    // the save is reported stopped again.
    const keptAlloc = allocsBefore[0]!;
    await waitFor('the restored alloc the client had stopped reported terminal', async () => {
      const al = (await api<{ ID: string; ClientStatus: string }[]>(a, 'GET', '/v1/job/kept/allocations')).body;
      return al.some((x) => x.ID === keptAlloc && x.ClientStatus !== 'running') ? true : undefined;
    }, 30_000);
    // As any complete (not failed) alloc, it is replaced at the job's next evaluation.
    assert.equal((await api(a, 'PUT', '/v1/job/kept/evaluate', {})).status, 200);
    await waitRunning(a, 'kept', 1, 30_000);
    // The client stops what the restored state no longer has.
    await waitFor('the alloc of a job the restored state does not know stopped by its client', async () => {
      const res = await fetch(`${a}/v1/client/allocation/${addedAllocs[0]!.ID}/stats`);
      return res.status >= 400 ? true : undefined;
    });

    // A restart keeps the restored state.
    const afterRestore = await observable(a);
    const port = agent.port;
    await agent.stop();
    agent = undefined;
    agent = await startAgent({ roleArgs: ['-dev'], dataDir, port });
    assert.deepEqual(await observable(agent.address), afterRestore);
    assert.equal((await api(agent.address, 'GET', '/v1/var/other/v')).status, 404);
  } finally {
    await agent?.stop();
    await rm(tmp, { recursive: true, force: true });
    await rm(dataDir, { recursive: true, force: true });
  }
});

test('operator snapshot: a client whose node the restored state does not know registers again and runs new work', async () => {
  const tmp = await mkdtemp('/tmp/cv-');
  const server = await startAgent({ roleArgs: ['-server'], dataDir: join(tmp, 's') });
  let client: AgentProcess | undefined;
  try {
    const a = server.address;
    // Saved before any node registered.
    const res = await fetch(`${a}/v1/operator/snapshot`);
    assert.equal(res.status, 200);
    const file = Buffer.from(await res.arrayBuffer());

    client = await startAgent({ roleArgs: ['-client', `-servers=127.0.0.1:${server.port}`], dataDir: join(tmp, 'c') });
    const nodeId = await waitFor('the client node ready', async () => (await api<{ ID: string; Status: string }[]>(a, 'GET', '/v1/nodes')).body.find((n) => n.Status === 'ready')?.ID);
    await runJob(a, tmp, 'before', sleepJobHcl('before'));
    const [old] = await waitRunning(a, 'before', 1);

    const r = await putRaw(a, file);
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(await ids(a, '/v1/jobs'), []);
    // The client learns its node is unknown and registers it again, under the same ID.
    await waitFor('the node registered again', async () => ((await api<{ ID: string; Status: string }>(a, 'GET', `/v1/node/${nodeId}`)).body.Status === 'ready' ? true : undefined), 30_000);
    // Its allocation of the job the restored state lacks is stopped by the client.
    await waitFor('the unknown alloc stopped', async () => ((await fetch(`${client!.address}/v1/client/allocation/${old!.ID}/stats`)).status >= 400 ? true : undefined), 30_000);
    await runJob(a, tmp, 'after', sleepJobHcl('after'));
    await waitRunning(a, 'after', 1, 30_000);
  } finally {
    await client?.stop();
    await server.stop();
    await rm(tmp, { recursive: true, force: true });
  }
});
