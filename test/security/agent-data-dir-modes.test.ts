/**
 * The agent's data directory is its user's only (issue 26 item 2): the server's log
 * (raft.db and its WAL, which held the bootstrap management token) was 0644, so any task able
 * to read a host path copied it. After an agent starts — also on a data directory an older
 * agent left world-readable — the data directory is 0700 and nothing under the server's and
 * the client's state directories is readable by group or others, including the WAL and SHM
 * files written later. Exec tasks, run as nobody in their allocation directory, still work.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, lstatSync, readdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { join, relative } from 'node:path';
import type { Allocation } from '../../src/structs/index.js';
import { api, startAgent, type AgentProcess } from '../integration/helpers/agent-process.js';
import { getAlloc, jobAllocs, runJob, teardown, waitFor } from '../integration/helpers/client-agent.js';

let agent: AgentProcess | undefined;
let dataDir: string;
let jobsDir: string;

/** Every entry below `dir` (and `dir`), with its permission bits; symlinks are not followed. */
function modesBelow(dir: string): Array<{ path: string; mode: number; isDir: boolean }> {
  const out: Array<{ path: string; mode: number; isDir: boolean }> = [];
  const walk = (p: string): void => {
    const st = lstatSync(p);
    out.push({ path: relative(dataDir, p) || '.', mode: st.mode & 0o777, isDir: st.isDirectory() });
    if (st.isDirectory()) for (const name of readdirSync(p)) walk(join(p, name));
  };
  walk(dir);
  return out;
}

/** What an older agent left: everything readable by all. */
function makeWorldReadable(dir: string): void {
  for (const e of modesBelow(dir)) chmodSync(join(dataDir, e.path), e.isDir ? 0o755 : 0o644);
}

function assertPrivate(): void {
  assert.equal(lstatSync(dataDir).mode & 0o777, 0o700, 'the data directory is 0700');
  const state = [...modesBelow(join(dataDir, 'server')), ...modesBelow(join(dataDir, 'client', 'client'))];
  assert.ok(state.some((e) => e.path.endsWith('raft.db-wal')), `the server's WAL exists: ${state.map((e) => e.path).join(', ')}`);
  assert.ok(state.some((e) => e.path.endsWith('state.db')), 'the client state database exists');
  const open = state.filter((e) => (e.mode & 0o077) !== 0);
  assert.deepEqual(open.map((e) => `${e.path} ${e.mode.toString(8)}`), [], 'no state file or directory is group/other accessible');
  assert.equal(lstatSync(join(dataDir, 'client')).mode & 0o777, 0o700, 'the client directory is 0700');
}

async function startTheAgent(): Promise<AgentProcess> {
  return startAgent({ roleArgs: ['-dev'], dataDir, rawExec: false });
}

before(async () => {
  dataDir = await mkdtemp('/tmp/cv-');
  jobsDir = await mkdtemp('/tmp/cv-jobs-');
});

after(async () => {
  await teardown(agent, dataDir);
  await rm(jobsDir, { recursive: true, force: true });
});

test('a fresh agent keeps its server and client state private, also files written later', async () => {
  agent = await startTheAgent();
  await waitFor('the node to be ready', async () => (await api<Array<{ Status: string }>>(agent!.address, 'GET', '/v1/nodes')).body.find((n) => n.Status === 'ready'));
  // Writes after start: a job registration grows the WAL.
  await runJob(agent.address, jobsDir, 'writes', `job "writes" {\n  type = "batch"\n  group "g" {\n    restart {\n      attempts = 0\n      mode = "fail"\n    }\n    task "t" {\n      driver = "exec"\n      config {\n        command = "/bin/sh"\n        args = ["-c", "echo local > /local/f && cat /local/f && echo tmp > /tmp/f && cat /tmp/f && ls -d /alloc/logs && id -un"]\n      }\n      resources {\n        cpu = 50\n        memory = 32\n      }\n    }\n  }\n}\n`);
  const stub = await waitFor('the exec task to finish', async () => (await jobAllocs(agent!.address, 'writes')).find((a) => a.ClientStatus === 'complete' || a.ClientStatus === 'failed'), 60_000);
  const alloc: Allocation = await getAlloc(agent.address, stub.ID);
  assert.equal(alloc.ClientStatus, 'complete', `the exec task still runs as nobody in its alloc dir: ${JSON.stringify(alloc.TaskStates?.['t']?.Events)}`);
  const out = (await api(agent.address, 'GET', `/v1/client/fs/logs/${alloc.ID}?task=t&type=stdout&plain=true`)).text;
  assert.equal(out, 'local\ntmp\n/alloc/logs\nnobody\n');
  assertPrivate();
});

test('a data directory an older agent left world-readable is made private on start', async () => {
  await agent!.stop();
  makeWorldReadable(dataDir);
  assert.equal(lstatSync(join(dataDir, 'server', 'server', 'raft.db')).mode & 0o777, 0o644);
  agent = await startTheAgent();
  assertPrivate();
});
