// Issue 17 item 12 with a real agent and a real task: the task plants symlinks in its log
// directory; the agent (root) must neither append the task's output to the host file nor serve it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { lstat, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { api } from './helpers/agent-process.js';
import { jobAllocs, runJob, startDevAgent, teardown, waitFor } from './helpers/client-agent.js';

function job(hostFile: string): string {
  // Plant t.stdout.1 -> host file and t.stderr.0 -> host file, then print past max_file_size (1 MB).
  const script = [
    `ln -sf ${hostFile} $NOMAD_ALLOC_DIR/logs/t.stdout.1`,
    `rm -f $NOMAD_ALLOC_DIR/logs/t.stderr.0; ln -s ${hostFile} $NOMAD_ALLOC_DIR/logs/t.stderr.0`,
    `yes x | tr -d '\\n' | head -c 1100000`,
    'echo planted > $NOMAD_ALLOC_DIR/done',
    'sleep 300',
  ].join('; ');
  return `
job "logesc" {
  datacenters = ["dc1"]
  group "g" {
    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/sh"
        args    = ["-c", ${JSON.stringify(script)}]
      }
      logs {
        max_files     = 3
        max_file_size = 1
      }
      resources {
        cpu    = 50
        memory = 32
      }
    }
  }
}
`;
}

test('a task planting symlinks in its log dir gets neither a host file written nor read', async () => {
  const dataDir = await mkdtemp('/tmp/cv-');
  const hostDir = await mkdtemp('/tmp/cv-host-');
  const hostFile = join(hostDir, 'shadow');
  await writeFile(hostFile, 'root:HOST-SECRET\n');
  const agent = await startDevAgent({ dataDir });
  try {
    await runJob(agent.address, hostDir, 'logesc', job(hostFile));
    const alloc = await waitFor('the running alloc', async () => (await jobAllocs(agent.address, 'logesc')).find((a) => a.ClientStatus === 'running'));
    const allocDir = join(dataDir, 'client', 'alloc', alloc.ID);
    await waitFor('the task to finish printing', async () => ((await readFile(join(allocDir, 'alloc', 'done'), 'utf8').catch(() => '')) === 'planted\n' ? true : undefined), 30_000);
    // Give the supervisor's pipe pump time to drain the last chunk past the limit.
    await waitFor('the output to reach the logs', async () => {
      const st = await lstat(join(allocDir, 'alloc', 'logs', 't.stdout.1')).catch(() => undefined);
      return st?.isFile() && st.size === 1100000 - 1024 * 1024 ? true : undefined;
    }, 20_000);

    assert.equal(await readFile(hostFile, 'utf8'), 'root:HOST-SECRET\n', 'the host file was not appended to');
    const logs = await api(agent.address, 'GET', `/v1/client/fs/logs/${alloc.ID}?task=t&type=stderr&plain=true`);
    assert.equal(logs.status, 403, logs.text);
    assert.doesNotMatch(logs.text, /HOST-SECRET/);
    const out = await api(agent.address, 'GET', `/v1/client/fs/logs/${alloc.ID}?task=t&type=stdout&plain=true&origin=end&offset=10`);
    assert.equal(out.status, 200, out.text);
    assert.equal(out.text, 'x'.repeat(10));
  } finally {
    await teardown(agent, dataDir);
    await rm(hostDir, { recursive: true, force: true });
  }
});
