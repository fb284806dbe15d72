/**
 * The exec driver: the driver conformance suite with real sandboxed tasks (bwrap + cgroups on
 * this machine), and its configuration rules. Needs root, bwrap and writable cgroups: on a host
 * without them the conformance tests fail with the driver's own reason.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createExecDriver } from '../../src/drivers/index.js';
import { DEFAULT_ALLOW_CAPS, parseExecPluginConfig, parseExecTaskConfig, taskCapabilities } from '../../src/drivers/exec/exec-config.js';
import { supervisorPaths } from '../../src/drivers/supervisor/protocol.js';
import { driverConformance, type ConformanceHarness } from './conformance.js';
import { mockTaskConfig, tempRoot } from './task-config.js';

const sh = (script: string) => ({ command: '/bin/sh', args: ['-c', script] });

function harness(): ConformanceHarness {
  const root = tempRoot();
  return {
    root,
    driver: createExecDriver({ dataDir: join(root, 'data'), supervisorIdleMs: 1_500, pluginConfig: { pids_limit: 64 } }),
    exitWith: (code) => sh(`exit ${code}`),
    runUntilStopped: () => ({ command: 'sleep', args: ['30'] }),
    ignoresStopSignal: () => sh('trap "" TERM; echo ready; sleep 30 & wait; sleep 30'),
    ignoringPrintsReady: true,
    printLines: (lines) => sh(lines.map((l) => `echo '${l}'`).join('; ')),
    advance: (ms) => sleep(Math.min(ms, 50)),
    expectStopped: {
      polite: (r) => assert.deepEqual([r.exitCode, r.signal, r.oomKilled], [128 + 15, 15, false]),
      forced: (r) => assert.deepEqual([r.exitCode, r.signal, r.oomKilled], [128 + 9, 9, false]),
    },
  };
}

async function cleanup(h: ConformanceHarness): Promise<void> {
  await h.driver.shutdown();
  try {
    const pid = Number(readFileSync(supervisorPaths(join(h.root, 'data')).pidFile, 'utf8'));
    if (pid > 0) process.kill(pid, 'SIGTERM');
  } catch {
    // Already gone.
  }
  rmSync(h.root, { recursive: true, force: true });
}

driverConformance('exec', async () => harness(), cleanup);

test('exec: stats come from the task cgroup', async () => {
  const h = harness();
  try {
    const handle = await h.driver.startTask(mockTaskConfig(h.root, sh('x=$(head -c 3000000 /dev/zero | tr "\\0" a); sleep 30')));
    let usage = await h.driver.taskStats(handle.taskId);
    for (let i = 0; i < 40 && usage.memoryRssBytes < 2_000_000; i++) {
      await sleep(50);
      usage = await h.driver.taskStats(handle.taskId);
    }
    assert.ok(usage.memoryRssBytes >= 2_000_000, `memory from the cgroup: ${usage.memoryRssBytes}`);
    assert.ok(usage.pids.length >= 2, `the sandbox's processes: ${usage.pids}`);
    await h.driver.destroyTask(handle.taskId, true);
  } finally {
    await cleanup(h);
  }
});

test('exec config: bad fields are named; modes, caps and chroot_env follow Nomad', () => {
  const plugin = parseExecPluginConfig(undefined);
  assert.deepEqual(Object.keys(plugin.chrootEnv).sort(), ['/bin', '/etc', '/lib', '/lib32', '/lib64', '/run/resolvconf', '/sbin', '/usr']);
  assert.equal(plugin.defaultPidMode, 'private');
  assert.throws(() => parseExecTaskConfig({}, plugin), /"command"/);
  assert.throws(() => parseExecTaskConfig({ command: 'x', pid_mode: 'shared' }, plugin), /"pid_mode"/);
  assert.throws(() => parseExecTaskConfig({ command: 'x', cap_add: ['cap_bogus'] }, plugin), /"cap_add".*cap_bogus/);
  assert.throws(() => parseExecTaskConfig({ command: 'x', work_dir: 'rel' }, plugin), /"work_dir"/);
  assert.throws(() => parseExecPluginConfig({ pids_limit: -1 }), /"pids_limit"/);
  assert.throws(() => parseExecPluginConfig({ seccomp: 'off' }), /"seccomp"/);
  assert.equal(plugin.pidsLimit, 4096, 'a default pids limit');
  assert.equal(plugin.seccomp, true, 'the seccomp filter by default');
  assert.equal(parseExecPluginConfig({ pids_limit: 0, seccomp: false }).seccomp, false);
  assert.throws(() => parseExecPluginConfig({ default_ipc_mode: 'x' }), /"default_ipc_mode"/);
  assert.throws(() => parseExecPluginConfig(undefined, { bin: '/bin' }), /chroot_env/);

  const task = (cfg: Record<string, unknown>) => parseExecTaskConfig({ command: 'x', ...cfg }, plugin);
  assert.deepEqual(taskCapabilities(task({}), plugin), [...DEFAULT_ALLOW_CAPS].sort());
  assert.deepEqual(taskCapabilities(task({ cap_drop: ['all'], cap_add: ['CAP_CHOWN'] }), plugin), []);
  assert.deepEqual(taskCapabilities(task({ cap_drop: ['kill', 'cap_mknod'] }), plugin).includes('kill'), false);
  assert.throws(() => taskCapabilities(task({ cap_add: ['sys_admin'] }), plugin), /allow_caps.*sys_admin/);
  const wide = parseExecPluginConfig({ allow_caps: ['chown', 'sys_admin'], default_pid_mode: 'host' });
  assert.deepEqual(taskCapabilities(parseExecTaskConfig({ command: 'x', cap_add: ['sys_admin'] }, wide), wide), ['chown', 'sys_admin']);
  assert.equal(parseExecTaskConfig({ command: 'x' }, wide).pidMode, 'host');
});
