/**
 * Poseidon's execution semantics (issue 27, "Done when") on the docker and exec drivers, through
 * a real dev agent's exec websocket as Poseidon drives it: a file copy through
 * `tar … --file=/dev/stdin` with the archive on stdin and stdin closed after it, a file listing
 * and a download, an execution whose time is up (the client closes the socket: the command is
 * killed), an interactive one on a terminal, environment variables, a non-zero exit code, and
 * stdout and stderr apart. raw_exec runs the same checks (its exec path is the exec spawner's,
 * as the mock driver's).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Allocation } from '../../src/structs/index.js';
import { BUSYBOX_IMAGE, importBusybox, startPrivateDockerd, type PrivateDockerd } from '../drivers/private-dockerd.js';
import { api, startAgent, type AgentProcess } from './helpers/agent-process.js';
import { execFrames, waitUntil, type ExecFramesOptions } from './helpers/poseidon-client.js';

let dockerd: PrivateDockerd;
let agent: AgentProcess;
let confDir: string;

before(async () => {
  dockerd = await startPrivateDockerd();
  await importBusybox(dockerd);
  confDir = mkdtempSync(join(tmpdir(), 'caravan-poseidon-exec-'));
  writeFileSync(join(confDir, 'agent.hcl'), `plugin "docker" {\n  config {\n    endpoint = "${dockerd.endpoint}"\n    gc {\n      image = false\n    }\n  }\n}\n`);
  agent = await startAgent({ roleArgs: ['-dev'], extraArgs: ['-config', join(confDir, 'agent.hcl')] });
});

after(async () => {
  await agent?.stop();
  await agent?.cleanup();
  await dockerd?.stop();
  rmSync(confDir, { recursive: true, force: true });
});


interface DriverCase {
  driver: 'docker' | 'exec' | 'raw_exec';
  config: Record<string, unknown>;
  /** Poseidon's copy command; busybox's tar has no long options. */
  untar: string[];
}

const CASES: DriverCase[] = [
  // busybox's tar drops the leading / of member names, so it extracts relative to /.
  { driver: 'docker', config: { image: BUSYBOX_IMAGE, command: 'sleep', args: ['infinity'], network_mode: 'none' }, untar: ['tar', '-x', '-v', '-f', '/dev/stdin', '-C', '/'] },
  { driver: 'exec', config: { command: '/bin/sleep', args: ['infinity'] }, untar: ['tar', '--extract', '--absolute-names', '--verbose', '--file=/dev/stdin'] },
  { driver: 'raw_exec', config: { command: '/bin/sleep', args: ['infinity'] }, untar: ['tar', '--extract', '--absolute-names', '--verbose', '--file=/dev/stdin'] },
];

/** A Poseidon runner job: one batch task kept alive by sleep, with an environment of its own. */
function runnerJob(id: string, c: DriverCase): Record<string, unknown> {
  return {
    ID: id,
    Name: id,
    Type: 'batch',
    Datacenters: ['dc1'],
    TaskGroups: [
      {
        Name: 'default-group',
        Count: 1,
        RestartPolicy: { Attempts: 0, Mode: 'fail' },
        Tasks: [{ Name: 'default-task', Driver: c.driver, Config: c.config, Env: { JOB_ENV: 'from-the-job' }, KillTimeout: 0, Resources: { CPU: 100, MemoryMB: 128 } }],
      },
    ],
  };
}

/** An archive whose members are absolute (`<workspace>/…`), as Poseidon's are. */
function poseidonArchive(WORKSPACE: string): { tar: Buffer; big: Buffer } {
  const src = mkdtempSync(join(tmpdir(), 'caravan-poseidon-tar-'));
  try {
    const big = randomBytes(10.5 * 1024 * 1024);
    writeFileSync(join(src, 'big.bin'), big);
    mkdirSync(join(src, 'sub'));
    writeFileSync(join(src, 'sub', 'small.txt'), 'hello from the archive\n');
    execFileSync('tar', ['-c', '-P', '-f', join(src, 'a.tar'), '-C', src, '--transform', `s,^,${WORKSPACE}/,`, '--owner=0', '--group=0', '--mode=a+rwX', 'big.bin', 'sub/small.txt']);
    return { tar: readFileSync(join(src, 'a.tar')), big };
  } finally {
    rmSync(src, { recursive: true, force: true });
  }
}

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

for (const c of CASES) {
  test(`Poseidon executions on the ${c.driver} driver through the exec websocket`, async (t) => {
    const jobId = `poseidon-${c.driver.replace('_', '-')}`;
    const reg = await api(agent.address, 'PUT', '/v1/jobs', { Job: runnerJob(jobId, c) });
    assert.equal(reg.status, 200, reg.text);
    const alloc = await waitUntil(`a running alloc of ${jobId}`, async () => {
      const l = await api<Allocation[]>(agent.address, 'GET', `/v1/job/${jobId}/allocations`);
      return l.body.find((a) => a.ClientStatus === 'running');
    }, 60_000);
    const exec = (command: string[], opts: Partial<ExecFramesOptions> = {}) => execFrames(agent.address, alloc.ID, { task: 'default-task', command, timeoutMs: 60_000, ...opts });
    try {
      // stdout and stderr apart, and a non-zero exit code.
      const plain = await exec(['sh', '-c', 'echo out; echo err >&2; exit 42']);
      assert.deepEqual({ stdout: plain.stdout, stderr: plain.stderr, exitCode: plain.exitCode }, { stdout: 'out\n', stderr: 'err\n', exitCode: 42 });

      // Environment variables: Poseidon's own (through env) on top of the task's.
      const env = await exec(['env', 'POSEIDON_VAR=hello world', 'sh', '-c', 'echo "$POSEIDON_VAR|$JOB_ENV|$NOMAD_TASK_NAME"']);
      assert.deepEqual({ stdout: env.stdout, exitCode: env.exitCode }, { stdout: 'hello world|from-the-job|default-task\n', exitCode: 0 }, env.stderr);

      // The reproduction: stdin reopened by path after the client closed it, and what it is.
      const reopened = await exec(['sh', '-c', 'sleep 0.3; cat /dev/stdin | wc -c; readlink /proc/self/fd/0; stat -L -c %F /dev/stdin'], { stdin: [Buffer.alloc(10240, 9)] });
      assert.equal(reopened.exitCode, 0, reopened.stderr);
      assert.match(reopened.stdout, /^\s*10240\npipe:\[\d+\]\nfifo\n$/);

      // File copy: the archive on stdin, stdin closed after it, into the task's own directory
      // (the task's user owns it; the path as the task sees it: /local in a sandbox or container).
      const taskDir = (await exec(['sh', '-c', 'echo "$NOMAD_TASK_DIR"'])).stdout.trim();
      assert.ok(taskDir.startsWith('/'), taskDir);
      const WORKSPACE = `${taskDir}/workspace`;
      const archive = poseidonArchive(WORKSPACE);
      const copy = await exec(['sh', '-c', `mkdir -p ${WORKSPACE} && exec "$@"`, 'sh', ...c.untar], { stdin: [archive.tar] });
      assert.equal(copy.exitCode, 0, `tar: ${copy.stderr}`);
      assert.match(copy.stdout + copy.stderr, /workspace\/big\.bin/, 'tar --verbose names what it extracted');
      assert.match(copy.stdout + copy.stderr, /workspace\/sub\/small\.txt/);

      // File listing and download.
      const listing = await exec(['ls', '-l', '-R', WORKSPACE]);
      assert.equal(listing.exitCode, 0, listing.stderr);
      assert.match(listing.stdout, new RegExp(`\\s${archive.big.length}\\s.*big\\.bin`));
      assert.match(listing.stdout, /small\.txt/);
      const download = await exec(['cat', `${WORKSPACE}/big.bin`]);
      assert.equal(download.exitCode, 0, download.stderr);
      assert.equal(download.stdoutBytes.length, archive.big.length);
      assert.equal(sha256(download.stdoutBytes), sha256(archive.big), 'the downloaded file is the copied one');
      const small = await exec(['cat', `${WORKSPACE}/sub/small.txt`]);
      assert.equal(small.stdout, 'hello from the archive\n');

      // An execution whose time is up: Poseidon closes the socket and the command is killed.
      const timedOut = await exec(['sh', '-c', 'echo started; exec sleep 313'], { abortWhen: (o) => o.stdout.includes('started'), closeStdin: false });
      assert.equal(timedOut.exitCode, null, 'the client ended it before any exit');
      await waitUntil('the timed-out command to be killed', async () => {
        // Every process's command line (busybox's image has no ps); a zombie's is empty.
        const ps = await exec(['sh', '-c', 'cat /proc/[0-9]*/cmdline 2>/dev/null; echo "<end>"']);
        return ps.stdout.includes('<end>') && !ps.stdout.includes('sleep\u0000313');
      }, 30_000);

      // Interactive, on a terminal: what is typed is echoed and run; stderr is merged.
      await t.test('interactive, on a terminal', async () => {
        const tty = await exec(['sh'], { tty: true, size: { height: 24, width: 80 }, stdin: ['tty; echo typed-$((20+22))\n', 'exit 7\n'], delayMs: 200, closeStdin: false });
        assert.match(tty.stdout, /typed-42/);
        assert.equal(tty.stderr, '');
        assert.match(tty.stdout, /\/dev\/pts\/\d+/);
        assert.equal(tty.exitCode, 7, JSON.stringify(tty));
      });
    } finally {
      await api(agent.address, 'DELETE', `/v1/job/${jobId}?purge=true`);
    }
  });
}
