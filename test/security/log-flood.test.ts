/**
 * A task that writes as fast as it can (`yes`, on stdout and stderr) against small log limits
 * (`max_files = 3`, `max_file_size = 1`): the hostile review found the limits held (issue 26,
 * "Held"), kept as a test with a real agent. While it floods, each stream's files together never
 * hold more than max_files × max_file_size bytes, no file passes max_file_size, and the agent
 * answers; once it stops, at most max_files files of each stream are left.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, statSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { api, type AgentProcess } from '../integration/helpers/agent-process.js';
import { jobAllocs, runJob, startDevAgent, teardown, waitFor } from '../integration/helpers/client-agent.js';

const MAX_FILES = 3;
const MAX_FILE_BYTES = 1024 * 1024;
/** How many rotations of stdout to watch before stopping the flood. */
const ROTATIONS = 12;

const JOB = `
job "flood" {
  datacenters = ["dc1"]
  group "g" {
    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "yes stderr-flood >&2 & exec yes stdout-flood"]
      }
      logs {
        max_files     = ${MAX_FILES}
        max_file_size = 1
      }
      resources {
        cpu    = 100
        memory = 32
      }
    }
  }
}`;

let agent: AgentProcess | undefined;
let dataDir: string;

before(async () => {
  dataDir = await mkdtemp('/tmp/cv-');
  agent = await startDevAgent({ dataDir });
});

after(async () => {
  await teardown(agent, dataDir);
});

interface StreamFiles {
  /** Indexes present, ascending. */
  indexes: number[];
  /** Bytes of each file, stat'ed newest first (an older file is full and no longer changes). */
  sizes: number[];
}

/**
 * The files of one stream. Sizes are read newest first: the files older than the newest are
 * full and never change, so the sum seen is at most what the set held when the newest was read,
 * even if the writer rotates meanwhile.
 */
function streamFiles(logDir: string, stream: 'stdout' | 'stderr'): StreamFiles {
  const prefix = `t.${stream}.`;
  const indexes = readdirSync(logDir)
    .filter((n) => n.startsWith(prefix) && /^\d+$/.test(n.slice(prefix.length)))
    .map((n) => Number(n.slice(prefix.length)))
    .sort((a, b) => a - b);
  const sizes: number[] = [];
  for (const n of [...indexes].reverse()) {
    try {
      sizes.push(statSync(join(logDir, `${prefix}${n}`)).size);
    } catch {
      // Removed by a rotation since the listing: it no longer counts.
    }
  }
  return { indexes, sizes };
}

test('a task flooding stdout and stderr with yes stays within max_files × max_file_size', { timeout: 120_000 }, async () => {
  const a = agent!;
  await runJob(a.address, dataDir, 'flood', JOB);
  const alloc = await waitFor('the flood running', async () => (await jobAllocs(a.address, 'flood')).find((x) => x.ClientStatus === 'running'), 30_000);
  const logDir = join(dataDir, 'client', 'alloc', alloc.ID, 'alloc', 'logs');
  let highest = 0;
  let samples = 0;
  const deadline = Date.now() + 60_000;
  while (highest < ROTATIONS) {
    assert.ok(Date.now() < deadline, `only ${highest} rotations of stdout in 60 s`);
    for (const stream of ['stdout', 'stderr'] as const) {
      const { indexes, sizes } = streamFiles(logDir, stream);
      const total = sizes.reduce((x, y) => x + y, 0);
      assert.ok(total <= MAX_FILES * MAX_FILE_BYTES, `${stream}: ${total} bytes in ${indexes.join(',')}`);
      for (const s of sizes) assert.ok(s <= MAX_FILE_BYTES, `${stream}: a file of ${s} bytes`);
      if (stream === 'stdout') highest = indexes[indexes.length - 1] ?? 0;
    }
    samples++;
    if (samples % 10 === 0) assert.equal((await api(a.address, 'GET', '/v1/agent/health')).status, 200, 'the agent answers during the flood');
    await sleep(20);
  }
  assert.ok(streamFiles(logDir, 'stderr').indexes.some((n) => n >= MAX_FILES), 'stderr was rotated too');
  // Stop the flood; once the task is gone nothing rotates and the count is exact.
  assert.equal((await api(a.address, 'DELETE', '/v1/job/flood')).status, 200);
  await waitFor('the flood stopped', async () => (await jobAllocs(a.address, 'flood')).find((x) => x.ID === alloc.ID && x.ClientStatus !== 'running'), 30_000);
  for (const stream of ['stdout', 'stderr'] as const) {
    const { indexes, sizes } = streamFiles(logDir, stream);
    assert.ok(indexes.length <= MAX_FILES, `${stream}: ${indexes.length} files left (${indexes.join(',')})`);
    assert.ok(indexes.length > 0, `${stream}: its newest files are kept`);
    for (const s of sizes) assert.ok(s <= MAX_FILE_BYTES, `${stream}: a file of ${s} bytes`);
  }
  const tail = await api(a.address, 'GET', `/v1/client/fs/logs/${alloc.ID}?task=t&type=stdout&plain=true&origin=end&offset=100&follow=false`);
  assert.equal(tail.status, 200, tail.text);
  assert.match(tail.text, /stdout-flood\nstdout-flood\n/, 'the newest output is served');
});
