/**
 * The exec fast path of the docker driver (resident-shell.ts, resident-exec.ts, shell-pipe-ends.ts)
 * against a real, private dockerd: a command started by the container's resident shell is told
 * from one the Engine's exec started by its parent — the shell (a pid in the container) versus
 * runc, outside the container's pid namespace ($PPID 0).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { startContainerExec } from '../../src/drivers/docker/container-exec.js';
import { DockerDriver } from '../../src/drivers/docker/docker-driver.js';
import { EngineClient, parseEndpoint } from '../../src/drivers/docker/engine-client.js';
import type { ExecStream, ExecStreamEvents, TaskHandle } from '../../src/drivers/driver.js';
import { BUSYBOX_IMAGE, engineCall, findRunsc, importBusybox, startPrivateDockerd, type PrivateDockerd } from './private-dockerd.js';
import { mockTaskConfig, tempRoot } from './task-config.js';
import { checkPipeStdio, type BytesResult } from '../helpers/pipe-stdio-checks.js';

let dockerd: PrivateDockerd;

before(async () => {
  dockerd = await startPrivateDockerd();
  await importBusybox(dockerd);
});

after(async () => {
  await dockerd?.stop();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface ExecResult {
  stdout: string;
  stderr: string;
  code: number;
}

/** Starts one exec; `done` settles with its output and exit code. */
function startExec(d: DockerDriver, taskId: string, cmd: string[], input?: string): { stream: ExecStream; done: Promise<ExecResult> } {
  let stream!: ExecStream;
  const done = new Promise<ExecResult>((resolve) => {
    let stdout = '';
    let stderr = '';
    const events: ExecStreamEvents = {
      onOutput: (s, b) => (s === 'stdout' ? (stdout += b.toString()) : (stderr += b.toString())),
      onExit: (code) => resolve({ stdout, stderr, code }),
    };
    stream = d.execSpec(taskId, cmd).start!(false, events);
    if (input !== undefined) {
      stream.write(Buffer.from(input));
      stream.closeStdin();
    }
  });
  return { stream, done };
}

/** Runs one exec with binary stdin; resolves with its raw output. */
function runExecBytes(d: DockerDriver, taskId: string, cmd: string[], input?: Buffer): Promise<BytesResult> {
  return new Promise((resolve) => {
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    const stream = d.execSpec(taskId, cmd).start!(false, {
      onOutput: (s, b) => (s === 'stdout' ? out : err).push(Buffer.from(b)),
      onExit: (code) => resolve({ stdout: Buffer.concat(out), stderr: Buffer.concat(err).toString(), code }),
    });
    if (input !== undefined) {
      stream.write(input);
      stream.closeStdin();
    }
  });
}

const runExec = (d: DockerDriver, taskId: string, cmd: string[], input?: string) => startExec(d, taskId, cmd, input).done;

/** Whether `cmd` ran under the resident shell: its parent is a process of the container. */
async function viaShell(d: DockerDriver, taskId: string): Promise<boolean> {
  const r = await runExec(d, taskId, ['sh', '-c', 'echo $PPID']);
  assert.equal(r.code, 0);
  return r.stdout.trim() !== '0';
}

/** Waits for the task's resident shell (up to 30 s: the first exec on a fresh dockerd is slow on a loaded machine). */
async function waitReady(d: DockerDriver, taskId: string): Promise<void> {
  for (let i = 0; i < 600 && !d.residentExecReady(taskId); i++) await sleep(50);
  assert.ok(d.residentExecReady(taskId), 'the resident shell comes up');
}

async function withTask(fn: (d: DockerDriver, h: TaskHandle, root: string) => Promise<void>, config: Record<string, unknown> = {}): Promise<void> {
  const root = tempRoot('caravan-docker-fast-');
  const d = new DockerDriver({ pluginConfig: { endpoint: dockerd.endpoint, allow_runtimes: ['runc', 'runsc'] } });
  try {
    const h = await d.startTask(mockTaskConfig(root, { image: BUSYBOX_IMAGE, command: 'sleep', args: ['1000'], network_mode: 'none', ...config }));
    await fn(d, h, root);
    await d.stopTask(h.taskId, 0, 'SIGKILL');
    await d.destroyTask(h.taskId, true);
  } finally {
    await d.shutdown();
    rmSync(root, { recursive: true, force: true });
  }
}

test('docker exec via the resident shell: stdout and stderr apart, exit codes, stdin, 126 as Docker, args verbatim, concurrent execs', async () => {
  await withTask(async (d, h) => {
    await waitReady(d, h.taskId);
    assert.equal(await viaShell(d, h.taskId), true, 'a command runs under the resident shell once it is up');
    assert.deepEqual(await runExec(d, h.taskId, ['sh', '-c', 'echo out; echo err >&2; exit 3']), { stdout: 'out\n', stderr: 'err\n', code: 3 });
    assert.deepEqual(await runExec(d, h.taskId, ['cat'], 'piped stdin\n'), { stdout: 'piped stdin\n', stderr: '', code: 0 });
    const odd = ["it's", '$(touch /tmp/pwned)', '`id`', '"; exit 9; "', '*', ' two  spaces ', '\\', ''];
    const echoed = await runExec(d, h.taskId, ['printf', '[%s]', ...odd]);
    assert.deepEqual(echoed, { stdout: odd.map((a) => `[${a}]`).join(''), stderr: '', code: 0 }, 'arguments reach the command verbatim');
    assert.equal((await runExec(d, h.taskId, ['ls', '/tmp/pwned'])).code, 1, 'no argument was run by the shell');
    const env = await runExec(d, h.taskId, ['sh', '-c', 'echo $NOMAD_SECRETS_DIR; id -u']);
    assert.equal(env.stdout, '/secrets\n0\n', 'the container environment and user, as an Engine exec has them');
    const missing = await runExec(d, h.taskId, ['no-such-command']);
    assert.equal(missing.code, 126, 'a command that is not there: 126, as Docker reports it');
    assert.match(missing.stdout + missing.stderr, /executable file not found/);
    const notExec = await runExec(d, h.taskId, ['/etc/hostname']);
    assert.equal(notExec.code, 126, 'a file that is not executable: 126, as Docker reports it');
    const killed = await runExec(d, h.taskId, ['sh', '-c', 'kill -9 $$']);
    assert.equal(killed.code, 137);
    const many = await Promise.all(Array.from({ length: 12 }, (_, i) => runExec(d, h.taskId, ['sh', '-c', `sleep 0.$((${i} % 3)); echo n${i}; echo e${i} >&2; exit ${i}`])));
    many.forEach((r, i) => assert.deepEqual(r, { stdout: `n${i}\n`, stderr: `e${i}\n`, code: i }));
    assert.equal(await viaShell(d, h.taskId), true);
  });
});

test('docker exec via the resident shell: ending a session kills the command', async () => {
  await withTask(async (d, h) => {
    await waitReady(d, h.taskId);
    const { stream, done } = startExec(d, h.taskId, ['sh', '-c', 'echo started; exec sleep 300']);
    await sleep(300);
    stream.kill();
    const r = await done;
    assert.equal(r.code, 137);
    const ps = await runExec(d, h.taskId, ['ps']);
    assert.doesNotMatch(ps.stdout, /sleep 300/, 'the command is gone');
  });
});

test('docker exec via the resident shell: stdin, stdout and stderr are pipes as under runc (reopenable, EOF on close, a 10 MB tar through /dev/stdin)', async () => {
  await withTask(async (d, h, root) => {
    await waitReady(d, h.taskId);
    assert.equal(await viaShell(d, h.taskId), true);
    await checkPipeStdio((cmd, input) => runExecBytes(d, h.taskId, cmd, input), root);
  });
});

test('docker exec through the Engine\'s exec (no resident shell): the same pipes', async () => {
  await withTask(async (d, h, root) => {
    // The Engine's exec alone, as used for tty sessions and before the shell is up.
    const engine = new EngineClient(parseEndpoint(dockerd.endpoint));
    const containerId = String((h.state as { containerId: string }).containerId);
    const engineRun = (cmd: string[], input?: Buffer) =>
      new Promise<BytesResult>((resolve) => {
        const out: Buffer[] = [];
        const err: Buffer[] = [];
        const stream = startContainerExec(engine, containerId, cmd, false, {
          onOutput: (s, b) => (s === 'stdout' ? out : err).push(Buffer.from(b)),
          onExit: (code) => resolve({ stdout: Buffer.concat(out), stderr: Buffer.concat(err).toString(), code }),
        });
        if (input !== undefined) {
          stream.write(input);
          stream.closeStdin();
        }
      });
    assert.ok(d);
    await checkPipeStdio(engineRun, root);
  });
});

test('docker exec: the shell dying falls back to the Engine exec and a new shell is started', async () => {
  await withTask(async (d, h) => {
    await waitReady(d, h.taskId);
    // Kill the resident shell from inside the container: the process running the loop, whose
    // parent is outside the container (PPid 0, as for the container's init).
    const r = await runExec(d, h.taskId, ['sh', '-c', 'for p in /proc/[0-9]*; do grep -q READY $p/cmdline && grep -q "^PPid:.0$" $p/status && kill -9 ${p#/proc/}; done; true']);
    assert.equal(r.code, 0);
    for (let i = 0; i < 100 && d.residentExecReady(h.taskId); i++) await sleep(20);
    assert.equal(d.residentExecReady(h.taskId), false, 'the driver saw the shell end');
    assert.equal(await viaShell(d, h.taskId), false, 'the next exec uses the Engine exec');
    await waitReady(d, h.taskId);
    assert.equal(await viaShell(d, h.taskId), true, 'and the shell is back');
  });
});

test('docker exec: an image without /bin/sh and gVisor containers use the Engine exec', async (t) => {
  const tag = 'caravan-nosh:test';
  await t.test('no /bin/sh', async () => {
    const made = await makeNoShImage(tag);
    if (!made) return t.skip('could not build the image');
    await withTask(async (d, h) => {
      await sleep(1500);
      assert.equal(d.residentExecReady(h.taskId), false);
      const r = await runExec(d, h.taskId, ['/busybox', 'sh', '-c', 'echo $PPID']);
      assert.deepEqual(r, { stdout: '0\n', stderr: '', code: 0 });
    }, { image: tag, command: '/busybox', args: ['sleep', '1000'] });
  });
  await t.test('runsc (gVisor)', async () => {
    assert.ok(findRunsc(), 'runsc is not installed (apt-get install runsc)');
    await withTask(async (d, h) => {
      await sleep(1500);
      assert.equal(d.residentExecReady(h.taskId), false, 'no resident shell in a gVisor container');
      assert.deepEqual(await runExec(d, h.taskId, ['sh', '-c', 'echo out; echo err >&2; exit 3']), { stdout: 'out\n', stderr: 'err\n', code: 3 });
    }, { runtime: 'runsc', pids_limit: 128 });
  });
});

test('docker exec with a tty uses the Engine exec even when the resident shell is up', async () => {
  await withTask(async (d, h) => {
    await waitReady(d, h.taskId);
    const r = await new Promise<ExecResult>((resolve) => {
      let stdout = '';
      const s = d.execSpec(h.taskId, ['sh', '-c', 'echo ppid=$PPID; tty']).start!(true, {
        onOutput: (_s, b) => (stdout += b.toString()),
        onExit: (code) => resolve({ stdout, stderr: '', code }),
      });
      s.resize({ width: 80, height: 24 });
    });
    assert.equal(r.code, 0);
    assert.match(r.stdout, /ppid=0/);
    assert.match(r.stdout, /\/dev\/pts\//);
  });
});

/** Builds `tag` from the busybox image with /bin moved away (no /bin/sh); false if the engine would not. */
async function makeNoShImage(tag: string): Promise<boolean> {
  const c = await engineCall(dockerd.socket, 'POST', '/containers/create', { Image: BUSYBOX_IMAGE, Cmd: ['/bin/sh', '-c', 'cp /bin/busybox /busybox && rm -rf /bin'], NetworkDisabled: true });
  if (c.status >= 300) return false;
  const id = (JSON.parse(c.text) as { Id: string }).Id;
  await engineCall(dockerd.socket, 'POST', `/containers/${id}/start`);
  await engineCall(dockerd.socket, 'POST', `/containers/${id}/wait`);
  const [repo, tg] = tag.split(':');
  const r = await engineCall(dockerd.socket, 'POST', `/commit?container=${id}&repo=${repo}&tag=${tg}`);
  await engineCall(dockerd.socket, 'DELETE', `/containers/${id}?force=1`);
  return r.status < 300;
}
