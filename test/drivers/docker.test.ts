/**
 * The docker driver against a real, private dockerd started by this file: the conformance
 * suite, then docker-specific behaviour (exec, OOM, reattach, refused config, images, GC).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { DockerDriver } from '../../src/drivers/docker/docker-driver.js';
import { DriverErrorCode, TaskRunState, type ExecStreamEvents, type ExitResult } from '../../src/drivers/driver.js';
import { driverConformance, type ConformanceHarness } from './conformance.js';
import { BUSYBOX_IMAGE, findRunsc, importBusybox, listContainers, startPrivateDockerd, type PrivateDockerd } from './private-dockerd.js';
import { mockTaskConfig, tempRoot } from './task-config.js';

let dockerd: PrivateDockerd;

before(async () => {
  dockerd = await startPrivateDockerd();
  await importBusybox(dockerd);
});

after(async () => {
  await dockerd?.stop();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const sh = (script: string, extra: Record<string, unknown> = {}) => ({ image: BUSYBOX_IMAGE, command: 'sh', args: ['-c', script], ...extra });

function newDriver(plugin: Record<string, unknown> = {}): DockerDriver {
  return new DockerDriver({ pluginConfig: { endpoint: dockerd.endpoint, ...plugin } });
}

driverConformance(
  'docker',
  async (): Promise<ConformanceHarness> => ({
    root: tempRoot('caravan-docker-'),
    driver: newDriver(),
    exitWith: (code) => sh(`exit ${code}`),
    // PID 1 in a container only gets signals it handles: the scripts trap them.
    runUntilStopped: () => sh('trap "exit 143" TERM; while true; do sleep 0.05; done'),
    ignoresStopSignal: () => sh('trap "" TERM; echo ready; while true; do sleep 0.05; done'),
    ignoringPrintsReady: true,
    printLines: (lines) => sh(lines.map((l) => `echo '${l}'`).join('; ')),
    advance: async (ms) => {
      await sleep(Math.min(ms, 50));
    },
    expectStopped: {
      polite: (r: ExitResult) => assert.equal(r.exitCode, 143),
      forced: (r: ExitResult) => assert.equal(r.exitCode, 137),
    },
  }),
  async (h) => {
    await h.driver.shutdown();
    for (const c of await listContainers(dockerd)) await fetchDelete(c.Id);
    rmSync(h.root, { recursive: true, force: true });
  },
);

async function fetchDelete(id: string): Promise<void> {
  const { engineCall } = await import('./private-dockerd.js');
  await engineCall(dockerd.socket, 'DELETE', `/containers/${id}?force=1`);
}

/** Runs one exec and collects its output and exit code. */
function runExec(d: DockerDriver, taskId: string, cmd: string[], tty: boolean, input?: string): Promise<{ stdout: string; stderr: string; code: number }> {
  return new Promise((resolve) => {
    let stdout = '';
    let stderr = '';
    const events: ExecStreamEvents = {
      onOutput: (s, b) => (s === 'stdout' ? (stdout += b.toString()) : (stderr += b.toString())),
      onExit: (code) => resolve({ stdout, stderr, code }),
    };
    const spec = d.execSpec(taskId, cmd);
    assert.ok(spec.start, 'docker exec runs through the engine, not on the host');
    const s = spec.start(tty, events);
    if (tty) s.resize({ width: 100, height: 30 });
    if (input !== undefined) {
      s.write(Buffer.from(input));
      s.closeStdin();
    }
  });
}

test('docker: exec without a tty keeps stdout, stderr and the exit code apart; with a tty it echoes stdin', async () => {
  const root = tempRoot('caravan-docker-');
  const d = newDriver();
  try {
    const h = await d.startTask(mockTaskConfig(root, sh('sleep 1000', { network_mode: 'none' })));
    const r = await runExec(d, h.taskId, ['sh', '-c', 'echo out; echo err >&2; exit 3'], false);
    assert.deepEqual(r, { stdout: 'out\n', stderr: 'err\n', code: 3 });
    const cat = await runExec(d, h.taskId, ['cat'], false, 'piped stdin\n');
    assert.deepEqual(cat, { stdout: 'piped stdin\n', stderr: '', code: 0 });
    const tty = await runExec(d, h.taskId, ['sh', '-c', 'read line; echo "got $line"; sleep 0.5; stty size'], true, 'hello\n');
    assert.match(tty.stdout, /hello/);
    assert.match(tty.stdout, /got hello/);
    assert.match(tty.stdout, /30 100/, 'the terminal has the size the client asked for');
    assert.equal(tty.code, 0);
    const env = await runExec(d, h.taskId, ['sh', '-c', 'echo $NOMAD_ALLOC_DIR $NOMAD_TASK_DIR $NOMAD_SECRETS_DIR; ls -d /alloc /local /secrets'], false);
    assert.equal(env.stdout, '/alloc /local /secrets\n/alloc\n/local\n/secrets\n');
    const killed = await runExec(d, h.taskId, ['sh', '-c', 'kill -9 $$'], false);
    assert.equal(killed.code, 137, 'a command killed by a signal exits 128+signal, as Docker reports it');
    const missing = await runExec(d, h.taskId, ['no-such-command'], false);
    assert.equal(missing.code, 126, 'a command that is not there: 126, as Docker reports it');
    assert.match(missing.stdout + missing.stderr, /executable file not found/);
    await d.stopTask(h.taskId, 0, 'SIGKILL');
    await d.destroyTask(h.taskId, true);
  } finally {
    await d.shutdown();
    rmSync(root, { recursive: true, force: true });
  }
});

test('docker: a memory hog is reported OOM-killed; memory, pids and env reach the container', async () => {
  const root = tempRoot('caravan-docker-');
  const d = newDriver();
  try {
    const cfg = mockTaskConfig(root, sh('dd if=/dev/zero of=/dev/null bs=200M count=1'), { resources: { cpuShares: 100, memoryMB: 32, memoryMaxMB: 0 } });
    const h = await d.startTask(cfg);
    const r = await d.waitTask(h.taskId);
    assert.equal(r.oomKilled, true, JSON.stringify(r));
    assert.equal(r.exitCode, 137);

    const cfg2 = mockTaskConfig(root, sh('cat /sys/fs/cgroup/memory/memory.limit_in_bytes 2>/dev/null || cat /sys/fs/cgroup/memory.max; echo "task=$NOMAD_TASK_NAME"', { pids_limit: 64 }), {
      resources: { cpuShares: 100, memoryMB: 48, memoryMaxMB: 0 },
    });
    const h2 = await d.startTask(cfg2);
    assert.equal((await d.waitTask(h2.taskId)).exitCode, 0);
    const out = readFileSync(join(cfg2.logs.dir, `${cfg2.taskName}.stdout.0`), 'utf8');
    assert.equal(out, `${48 * 1024 * 1024}\ntask=${cfg2.taskName}\n`);
    for (const id of [h.taskId, h2.taskId]) await d.destroyTask(id, true);
  } finally {
    await d.shutdown();
    rmSync(root, { recursive: true, force: true });
  }
});

test('docker: a new driver instance reattaches to running containers and learns exits it missed', async () => {
  const root = tempRoot('caravan-docker-');
  const d1 = newDriver();
  const d2 = newDriver();
  try {
    const running = await d1.startTask(mockTaskConfig(root, sh('echo before; sleep 1000')));
    const ending = await d1.startTask(mockTaskConfig(root, sh('sleep 0.3; echo late; exit 4')));
    await sleep(100);
    await d1.shutdown(); // the agent goes away; containers stay
    await sleep(600);
    await d2.recoverTask(running);
    await d2.recoverTask(ending);
    assert.equal(d2.inspectTask(running.taskId).state, TaskRunState.Running);
    assert.equal((await d2.waitTask(ending.taskId)).exitCode, 4);
    const late = readFileSync(join(ending.config.logs.dir, `${ending.config.taskName}.stdout.0`), 'utf8');
    assert.equal(late, 'late\n', 'output written while the driver was away is copied once');
    const before = readFileSync(join(running.config.logs.dir, `${running.config.taskName}.stdout.0`), 'utf8');
    assert.equal(before, 'before\n');
    const mine = (await listContainers(dockerd)).filter((c) => c.Labels['com.hashicorp.nomad.alloc_id'] === running.config.allocId);
    assert.equal(mine.length, 1, 'one container per task, never duplicated');
    await d2.stopTask(running.taskId, 0, 'SIGKILL');
    for (const h of [running, ending]) await d2.destroyTask(h.taskId, true);
    const left = (await listContainers(dockerd)).filter((c) => [running.config.allocId, ending.config.allocId].includes(c.Labels['com.hashicorp.nomad.alloc_id']!));
    assert.deepEqual(left, [], 'destroy removes the containers');
    // A handle whose container is gone cannot be recovered.
    await assert.rejects(d2.recoverTask({ ...running, taskId: 'gone-alloc/web', state: { containerId: 'nope' } }), (e: { code?: string }) => e.code === DriverErrorCode.TaskNotFound);
  } finally {
    await d2.shutdown();
    rmSync(root, { recursive: true, force: true });
  }
});

test('docker: config that is not allowed is refused naming the option', async () => {
  const root = tempRoot('caravan-docker-');
  const d = newDriver();
  try {
    const before = (await listContainers(dockerd)).length;
    const refused = async (cfg: Record<string, unknown>, re: RegExp) =>
      assert.rejects(d.startTask(mockTaskConfig(root, cfg)), (e: { code?: string; message: string }) => e.code === DriverErrorCode.BadConfig && re.test(e.message));
    await refused({ image: BUSYBOX_IMAGE, privileged: true }, /"privileged"/);
    await refused({ image: BUSYBOX_IMAGE, runtime: 'runsc' }, /"runtime".*runsc/);
    await refused({ image: BUSYBOX_IMAGE, cap_add: ['sys_admin'] }, /"cap_add\[0\]".*sys_admin/);
    await refused({ image: BUSYBOX_IMAGE, volumes: ['/etc:/host-etc'] }, /"volumes\[0\]".*volumes are not enabled/);
    await refused({ image: BUSYBOX_IMAGE, mount: [{ type: 'bind', source: '/etc', target: '/x' }] }, /"mount\[0\]\.source"/);
    await refused({ image: BUSYBOX_IMAGE, no_such_option: 1 }, /"no_such_option"/);
    await refused({ command: 'sh' }, /"image" is required/);
    await refused({ image: BUSYBOX_IMAGE, ports: ['http'] }, /"ports\[0\]".*http/);
    await refused({ image: BUSYBOX_IMAGE, ulimit: { nofile: 'lots' } }, /"ulimit\.nofile"/);
    assert.equal((await listContainers(dockerd)).length, before, 'nothing created for refused config');

    // What the plugin config allows goes through. (`privileged` itself cannot run on a machine
    // whose own capability bounding set lacks some capability, as this one lacks sys_resource.)
    const allowed = newDriver({ allow_privileged: true, allow_caps: ['all'], volumes: [{ enabled: true }] });
    const cfg = mockTaskConfig(root, sh('cat /hostdir/marker; id -u', { cap_add: ['sys_admin'], volumes: [`${root}:/hostdir:ro`], init: true, readonly_rootfs: true, hostname: 'box', work_dir: '/tmp', labels: [{ team: 'a' }], extra_hosts: ['db:10.0.0.1'], ulimit: { nofile: '512:1024' }, shm_size: 1048576, dns_servers: ['10.0.0.2'], security_opt: ['no-new-privileges'] }));
    const { writeFileSync } = await import('node:fs');
    writeFileSync(join(root, 'marker'), 'marked\n');
    const h = await allowed.startTask(cfg);
    const r = await allowed.waitTask(h.taskId);
    assert.equal(r.exitCode, 0, readFileSync(join(cfg.logs.dir, `${cfg.taskName}.stderr.0`), 'utf8'));
    assert.equal(readFileSync(join(cfg.logs.dir, `${cfg.taskName}.stdout.0`), 'utf8'), 'marked\n0\n');
    await allowed.destroyTask(h.taskId, true);
    await allowed.shutdown();
  } finally {
    await d.shutdown();
    rmSync(root, { recursive: true, force: true });
  }
});

test('docker: a missing image fails the start with a clear message; the fingerprint names the engine', async () => {
  const root = tempRoot('caravan-docker-');
  const d = newDriver({ pull_activity_timeout: '20s' });
  const events: string[] = [];
  try {
    const fp = await d.fingerprint();
    assert.equal(fp.attributes['driver.docker'], '1');
    assert.match(fp.attributes['driver.docker.version'] ?? '', /^\d+\.\d+/);
    assert.match(fp.attributes['driver.docker.runtimes'] ?? '', /runc/);
    await assert.rejects(
      d.startTask(mockTaskConfig(root, { image: 'caravan-no-such-image:1' }), { emit: (m) => events.push(m) }),
      (e: { code?: string; message: string }) => e.code === DriverErrorCode.StartFailed && /Failed to pull `caravan-no-such-image:1`/.test(e.message),
    );
    assert.ok(events.includes('Downloading image'), events.join(','));
    const gone = new DockerDriver({ pluginConfig: { endpoint: `unix://${root}/no.sock` } });
    const fp2 = await gone.fingerprint();
    assert.equal(fp2.detected, false);
    assert.match(fp2.healthDescription, /Failed to connect to docker daemon/);
    await gone.shutdown();
  } finally {
    await d.shutdown();
    rmSync(root, { recursive: true, force: true });
  }
});

test('docker: stats report memory and cpu of the container', async () => {
  const root = tempRoot('caravan-docker-');
  const d = newDriver();
  try {
    const h = await d.startTask(mockTaskConfig(root, sh('while true; do :; done')));
    await sleep(300);
    await d.taskStats(h.taskId);
    await sleep(300);
    const u = await d.taskStats(h.taskId);
    assert.ok(u.memoryRssBytes > 0, `rss ${u.memoryRssBytes}`);
    assert.ok(u.cpuTotalTicks > 0, `ticks ${u.cpuTotalTicks}`);
    assert.ok(u.cpuPercent > 10, `cpu ${u.cpuPercent}`);
    await d.destroyTask(h.taskId, true);
  } finally {
    await d.shutdown();
    rmSync(root, { recursive: true, force: true });
  }
});

test('docker: runtime = "runsc" (gVisor) runs and execs when the client allows it, as Poseidon configures it', async () => {
  assert.ok(findRunsc(), 'runsc is not installed (apt-get install runsc): Poseidon runs its containers in gVisor');
  const root = tempRoot('caravan-docker-');
  const d = newDriver({ allow_runtimes: ['runsc'] });
  try {
    const fp = await d.fingerprint();
    assert.match(fp.attributes['driver.docker.runtimes'] ?? '', /runsc/);
    const cfg = mockTaskConfig(root, sh('echo "in $(uname -r)"; sleep 1000', { runtime: 'runsc', network_mode: 'none', pids_limit: 128 }));
    const h = await d.startTask(cfg);
    const r = await runExec(d, h.taskId, ['sh', '-c', 'echo out; echo err >&2; exit 3'], false);
    assert.deepEqual(r, { stdout: 'out\n', stderr: 'err\n', code: 3 });
    await d.stopTask(h.taskId, 0, 'SIGKILL');
    assert.match(readFileSync(join(cfg.logs.dir, `${cfg.taskName}.stdout.0`), 'utf8'), /^in \S+/);
    await d.destroyTask(h.taskId, true);
    // runc is not in this client's allow_runtimes any more.
    await assert.rejects(d.startTask(mockTaskConfig(root, sh('true', { runtime: 'runc' }))), /"runtime"/);
  } finally {
    await d.shutdown();
    rmSync(root, { recursive: true, force: true });
  }
});

test('docker: images no task uses are removed after gc.image_delay; containers are kept when gc.container = false', async () => {
  const root = tempRoot('caravan-docker-');
  const d = newDriver({ gc: [{ image: true, image_delay: '300ms', container: false }] });
  const tag = 'caravan-busybox:gc';
  try {
    await importBusybox(dockerd, tag);
    const h = await d.startTask(mockTaskConfig(root, { image: tag, command: 'true' }));
    await d.waitTask(h.taskId);
    await d.destroyTask(h.taskId, true);
    const kept = (await listContainers(dockerd)).filter((c) => c.Labels['com.hashicorp.nomad.alloc_id'] === h.config.allocId);
    assert.equal(kept.length, 1, 'gc.container = false leaves the container');
    const { engineCall } = await import('./private-dockerd.js');
    await engineCall(dockerd.socket, 'DELETE', `/containers/${kept[0]!.Id}?force=1`);
    await sleep(1_000);
    const img = await engineCall(dockerd.socket, 'GET', `/images/${encodeURIComponent(tag)}/json`);
    assert.equal(img.status, 404, 'the unused image was removed after the delay');
  } finally {
    await d.shutdown();
    rmSync(root, { recursive: true, force: true });
  }
});

test('docker: dangling containers of this client are removed; tracked ones and other clients\' are kept', async () => {
  const root = tempRoot('caravan-docker-');
  const { engineCall } = await import('./private-dockerd.js');
  const d = new DockerDriver({ pluginConfig: { endpoint: dockerd.endpoint, gc: [{ dangling_containers: [{ period: '200ms', creation_grace: '0s' }] }] }, clientId: 'client-a' });
  try {
    const h = await d.startTask(mockTaskConfig(root, sh('sleep 1000')));
    const create = async (name: string, client: string) => {
      const r = await engineCall(dockerd.socket, 'POST', `/containers/create?name=${name}`, { Image: BUSYBOX_IMAGE, Cmd: ['sleep', '1000'], Labels: { 'io.caravan.client_id': client, 'com.hashicorp.nomad.alloc_id': name } });
      assert.equal(r.status, 201, r.text);
      return (JSON.parse(r.text) as { Id: string }).Id;
    };
    const dangling = await create('dangling-a', 'client-a');
    const other = await create('other-b', 'client-b');
    await waitFor(async () => !(await listContainers(dockerd)).some((c) => c.Id === dangling));
    const ids = (await listContainers(dockerd)).map((c) => c.Id);
    assert.ok(ids.includes(other), "another client's container is kept");
    assert.ok(ids.includes(String(h.state['containerId'])), 'the tracked task keeps its container');
    assert.equal(d.inspectTask(h.taskId).state, TaskRunState.Running);
    await engineCall(dockerd.socket, 'DELETE', `/containers/${other}?force=1`);
    await d.destroyTask(h.taskId, true);
  } finally {
    await d.shutdown();
    rmSync(root, { recursive: true, force: true });
  }
});

async function waitFor(cond: () => Promise<boolean>, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await sleep(100);
  }
}
