/**
 * The docker driver's direct exec (src/drivers/docker/direct-exec.ts, native/docker-exec) against
 * a real, private dockerd: a command it runs ends up inside the container — its filesystem,
 * hostname, pid namespace and cgroups — with exactly the user, capabilities, seccomp filter,
 * limits and environment the Engine's own exec gives, never more; what it cannot enter goes
 * through the Engine.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readlinkSync, readFileSync, rmSync } from 'node:fs';
import { hostname } from 'node:os';
import { startContainerExec } from '../../src/drivers/docker/container-exec.js';
import { directExecSpec, prepareDirectExec } from '../../src/drivers/docker/direct-exec.js';
import { DockerDriver, type DockerDriverOptions } from '../../src/drivers/docker/docker-driver.js';
import { EngineClient } from '../../src/drivers/docker/engine-client.js';
import type { ExecStreamEvents } from '../../src/drivers/driver.js';
import { buildDirectExecHelper, pathOf, runExec, startExec, waitForDirect, type ExecResult } from './docker-exec-run.js';
import { BUSYBOX_IMAGE, findRunsc, importBusybox, startPrivateDockerd, type PrivateDockerd } from './private-dockerd.js';
import { mockTaskConfig, tempRoot } from './task-config.js';

let dockerd: PrivateDockerd;
let engine: EngineClient;

/** Without Go the helper is not built (scripts/build-native.mjs says SKIPPED), nor tested here. */
const NO_GO = buildDirectExecHelper();

before(async () => {
  if (NO_GO) return;
  dockerd = await startPrivateDockerd();
  await importBusybox(dockerd);
  engine = new EngineClient({ socketPath: dockerd.socket });
});

after(async () => {
  engine?.close();
  await dockerd?.stop();
});

function newDriver(opts: Omit<DockerDriverOptions, 'pluginConfig'> = {}, plugin: Record<string, unknown> = {}): DockerDriver {
  return new DockerDriver({ pluginConfig: { endpoint: dockerd.endpoint, ...plugin }, ...opts });
}

const sleeper = (extra: Record<string, unknown> = {}) => ({ image: BUSYBOX_IMAGE, command: 'sleep', args: ['1000'], network_mode: 'none', ...extra });

/** The Engine's own exec of `cmd` in a container: the reference the direct path must equal. */
function engineExec(containerId: string, cmd: string[]): Promise<ExecResult> {
  return new Promise((resolve) => {
    let stdout = '';
    let stderr = '';
    const events: ExecStreamEvents = {
      onOutput: (s, b) => (s === 'stdout' ? (stdout += b.toString()) : (stderr += b.toString())),
      onExit: (code) => resolve({ stdout, stderr, code }),
    };
    startContainerExec(engine, containerId, cmd, false, events);
  });
}

/** Everything that tells where a process is and what it may do, as seen from inside. */
const PROBE = [
  'id',
  'hostname',
  'busybox grep -E "^(Cap|NoNewPrivs|Seccomp)" /proc/self/status',
  'cat /proc/self/cgroup',
  'for n in pid mnt net uts ipc cgroup; do echo "$n $(busybox readlink /proc/self/ns/$n)"; done',
  'echo root: $(ls /)',
  'echo "pid1: $(busybox tr "\\0" " " < /proc/1/cmdline)"',
  'echo "nofile: $(ulimit -n) nproc: $(ulimit -u)"',
  'env | busybox grep -v "^_=" | busybox sort',
  'pwd',
  'busybox unshare -U -r true 2>/dev/null && echo "new user namespace: allowed" || echo "new user namespace: denied"',
].join('; ');

for (const user of ['', '1000:1000']) {
  test(`docker direct exec (user ${user || 'root'}): inside the container's namespaces, cgroups and root, with no more privilege than the Engine's exec`, { skip: NO_GO }, async () => {
    const root = tempRoot('caravan-docker-direct-');
    const d = newDriver();
    try {
      const h = await d.startTask(mockTaskConfig(root, sleeper({ work_dir: '/tmp' }), { user, env: { FOO: 'bar baz' } }));
      const containerId = String(h.state['containerId']);
      await waitForDirect(d, h.taskId);
      const direct = await runExec(d, h.taskId, ['sh', '-c', PROBE], false, { path: 'direct' });
      const viaEngine = await engineExec(containerId, ['sh', '-c', PROBE]);
      assert.equal(direct.code, 0, direct.stderr);
      assert.equal(direct.stdout, viaEngine.stdout, 'the direct path sees and may do exactly what the Engine exec does');
      assert.equal(direct.stderr, viaEngine.stderr);

      // And what that is, from the host's side: not the host.
      const out = direct.stdout;
      assert.match(out, user ? /^uid=1000 gid=1000 / : /^uid=0 gid=0 /);
      assert.match(out, new RegExp(`^${containerId.slice(0, 12)}$`, 'm'), 'the container hostname');
      assert.ok(!out.includes(`\n${hostname()}\n`), 'not the host name');
      assert.match(out, /^root: alloc bin dev etc local proc secrets sys tmp$/m, "the container's filesystem, not the host's");
      assert.match(out, /^pid1: sleep 1000 $/m, "the container's pid namespace");
      for (const ns of ['pid', 'mnt', 'net', 'uts', 'ipc']) {
        const line = new RegExp(`^${ns} (\\S+)$`, 'm').exec(out)?.[1];
        assert.ok(line && line !== readlinkSync(`/proc/self/ns/${ns}`), `the container's ${ns} namespace, not the host's`);
      }
      const cgroupLines = out.split('\n').filter((l) => /^\d+:[^:]*:\//.test(l));
      assert.ok(cgroupLines.length > 0 && cgroupLines.every((l) => l.includes(containerId)), `in the container's cgroups:\n${cgroupLines.join('\n')}`);
      assert.match(out, /^Seccomp:\s+2$/m, "under the container's seccomp filter");
      assert.match(out, /new user namespace: denied/, 'the seccomp filter holds (the host allows new user namespaces)');
      const hostBnd = /CapBnd:\s+(\S+)/.exec(readFileSync('/proc/self/status', 'utf8'))![1];
      assert.notEqual(/CapBnd:\s+(\S+)/.exec(out)?.[1], hostBnd, "the container's capability bounding set, not the agent's");
      if (user) assert.match(out, /^CapEff:\s+0+$/m, 'no effective capabilities for a non-root user');
      assert.match(out, /^FOO=bar baz$/m, "the container's env");
      assert.match(out, /^\/tmp$/m, "the container's working dir");
      await d.stopTask(h.taskId, 0, 'SIGKILL');
      await d.destroyTask(h.taskId, true);
    } finally {
      await d.shutdown();
      rmSync(root, { recursive: true, force: true });
    }
  });
}

test('docker direct exec: ending the session kills the command inside the container', { skip: NO_GO }, async () => {
  const root = tempRoot('caravan-docker-direct-');
  const d = newDriver();
  try {
    const h = await d.startTask(mockTaskConfig(root, sleeper()));
    const containerId = String(h.state['containerId']);
    await waitForDirect(d, h.taskId);
    for (const tty of [false, true]) {
      const spec = d.execSpec(h.taskId, ['sleep', '777']);
      assert.equal(pathOf(spec), 'direct');
      const exited = new Promise<number>((resolve) => {
        const s = startExec(spec, tty, { onOutput: () => undefined, onExit: resolve });
        setTimeout(() => s.kill(), 300);
      });
      assert.ok((await exited) !== 0);
      const ps = await engineExec(containerId, ['busybox', 'ps']);
      assert.doesNotMatch(ps.stdout, /sleep 777/, `the command is gone (tty ${tty})`);
    }
    await d.destroyTask(h.taskId, true);
  } finally {
    await d.shutdown();
    rmSync(root, { recursive: true, force: true });
  }
});

test('docker direct exec: a context whose process is gone is refused, never run elsewhere', { skip: NO_GO }, async () => {
  const root = tempRoot('caravan-docker-direct-');
  const d = newDriver({ directExec: false });
  try {
    const h = await d.startTask(mockTaskConfig(root, sleeper()));
    const info = JSON.parse((await (await import('./private-dockerd.js')).engineCall(dockerd.socket, 'GET', `/containers/${String(h.state['containerId'])}/json`)).text) as { Id: string; State: { Pid: number } };
    const prepared = await prepareDirectExec(info.Id, info.State.Pid);
    assert.ok(prepared.ok, prepared.ok ? '' : prepared.reason);
    // The same pid, but another process (as after the container died and its pid was reused).
    const stale = directExecSpec({ ...prepared.context, startTime: '1' }, ['echo', 'escaped']);
    const r = await new Promise<ExecResult>((resolve) => {
      let stdout = '';
      let stderr = '';
      startExec(stale, false, { onOutput: (s, b) => (s === 'stdout' ? (stdout += b.toString()) : (stderr += b.toString())), onExit: (code) => resolve({ stdout, stderr, code }) });
    });
    assert.equal(r.code, 127);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, /gone/);
    // A pid that is not a container's init (here: the test itself) is not prepared at all.
    const host = await prepareDirectExec(info.Id, process.pid);
    assert.equal(host.ok, false);
    await d.stopTask(h.taskId, 0, 'SIGKILL');
    await d.destroyTask(h.taskId, true);
  } finally {
    await d.shutdown();
    rmSync(root, { recursive: true, force: true });
  }
});

test('docker direct exec: gVisor (runsc) containers, a disabled or missing helper: exec goes through the Engine', { skip: NO_GO }, async () => {
  assert.ok(findRunsc(), 'runsc is not installed (apt-get install runsc)');
  const root = tempRoot('caravan-docker-direct-');
  const gvisor = newDriver({}, { allow_runtimes: ['runc', 'runsc'] });
  const off = newDriver({ directExec: false });
  const missing = newDriver({ directExecHelper: '/nonexistent/caravan-docker-exec' });
  try {
    const g = await gvisor.startTask(mockTaskConfig(root, sleeper({ runtime: 'runsc', pids_limit: 128 })));
    const info = JSON.parse((await (await import('./private-dockerd.js')).engineCall(dockerd.socket, 'GET', `/containers/${String(g.state['containerId'])}/json`)).text) as { Id: string; State: { Pid: number } };
    const refused = await prepareDirectExec(info.Id, info.State.Pid);
    assert.equal(refused.ok, false, 'the helper itself refuses a gVisor container');
    for (const [d, h] of [
      [gvisor, g],
      [off, await off.startTask(mockTaskConfig(root, sleeper()))],
      [missing, await missing.startTask(mockTaskConfig(root, sleeper()))],
    ] as const) {
      await new Promise((r) => setTimeout(r, 300)); // time enough for a prepare that should not happen
      const r = await runExec(d, h.taskId, ['sh', '-c', 'echo out; echo err >&2; exit 3'], false, { path: 'engine' });
      assert.deepEqual(r, { stdout: 'out\n', stderr: 'err\n', code: 3 });
      await d.stopTask(h.taskId, 0, 'SIGKILL');
      await d.destroyTask(h.taskId, true);
    }
  } finally {
    for (const d of [gvisor, off, missing]) await d.shutdown();
    rmSync(root, { recursive: true, force: true });
  }
});
