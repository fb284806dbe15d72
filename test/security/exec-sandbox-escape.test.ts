/**
 * Hostile tasks in the exec sandbox, run through the real driver (bubblewrap, cgroups, the
 * seccomp filter) as root — which an operator may allow with user.denylist — and as nobody (the
 * default): each tries a way out of the sandbox or into the host kernel that worked before
 * (issue 26, item 3) and must be refused.
 *
 * Nothing here changes the host: kernel knobs are only opened for writing (never written; a
 * refused open is the point), and the syscalls are called with arguments that would do nothing
 * even if they went through. Needs root, bwrap and writable cgroups, as the exec driver does;
 * the syscall probes need python3 on the host (bound into the sandbox by the default chroot_env)
 * and are skipped, saying so, without it.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createExecDriver, type ExecDriver } from '../../src/drivers/exec/exec-driver.js';
import { runExecSpec } from '../../src/drivers/run-exec-spec.js';
import { supervisorPaths } from '../../src/drivers/supervisor/protocol.js';
import { DEFAULT_PIDS_LIMIT } from '../../src/drivers/exec/exec-config.js';
import { mockTaskConfig, tempRoot } from '../drivers/task-config.js';

const USERS = ['root', 'nobody'] as const;
const PYTHON = '/usr/bin/python3';
const hasPython = existsSync(PYTHON);
const BOMB_PIDS_LIMIT = 24;

interface Sandbox {
  root: string;
  driver: ExecDriver;
}

const sandboxes: Sandbox[] = [];

function sandbox(pluginConfig: Record<string, unknown> = {}): Sandbox {
  const root = tempRoot('cv-sbx-');
  const s = { root, driver: createExecDriver({ dataDir: join(root, 'data'), supervisorIdleMs: 1_500, pluginConfig }) };
  sandboxes.push(s);
  return s;
}

let main: Sandbox;

before(() => {
  main = sandbox();
});

after(async () => {
  for (const s of sandboxes) {
    await s.driver.shutdown();
    try {
      const pid = Number(readFileSync(supervisorPaths(join(s.root, 'data')).pidFile, 'utf8'));
      if (pid > 0) process.kill(pid, 'SIGTERM');
    } catch {
      // Already gone.
    }
    rmSync(s.root, { recursive: true, force: true });
  }
});

/** Runs `script` with /bin/sh in a new sandbox as `user`; its exit code and stdout. */
async function runScript(s: Sandbox, user: string, script: string): Promise<{ exitCode: number; out: string }> {
  const config = mockTaskConfig(s.root, { command: '/bin/sh', args: ['-c', script] }, { user });
  const handle = await s.driver.startTask(config);
  const timer = new AbortController();
  try {
    // A probe that hangs (a refusal that did not happen can stop a process) fails, not hangs, the test.
    const r = await Promise.race([
      s.driver.waitTask(handle.taskId),
      sleep(60_000, undefined, { signal: timer.signal }).then(() => assert.fail(`the task did not finish: ${script.slice(0, 200)}`)),
    ]);
    return { exitCode: r.exitCode, out: readFileSync(join(config.logs.dir, `${config.taskName}.stdout.0`), 'utf8') };
  } finally {
    timer.abort();
    await s.driver.destroyTask(handle.taskId, true);
  }
}

/** `name=value` lines of the output as a map. */
function lines(out: string): Map<string, string> {
  const m = new Map<string, string>();
  for (const l of out.split('\n')) {
    const i = l.indexOf('=');
    if (i > 0) m.set(l.slice(0, i), l.slice(i + 1));
  }
  return m;
}

/**
 * Python run in the sandbox calling raw syscalls through ctypes; prints `name=errno` (0 when
 * the call succeeded). Each call is one that changes nothing even if allowed.
 */
const SYSCALL_PROBE = `
import ctypes, os, signal, time
libc = ctypes.CDLL(None, use_errno=True)
def raw(nr, *args):
    ctypes.set_errno(0)
    r = libc.syscall(ctypes.c_long(nr), *[ctypes.c_long(a) for a in args])
    return r, (0 if r >= 0 else ctypes.get_errno())
def call(name, nr, *args):
    r, err = raw(nr, *args)
    if r == 0 and name.startswith('clone'):
        os._exit(0)  # a child that should not exist: leave at once
    if r > 0 and name.startswith('clone'):
        os.waitpid(r, 0)
    print(f"{name}={err}", flush=True)
def in_child(name, nr, *args):
    # Run where a success harms nothing: a child that exits right after (its tracer would be us).
    pid = os.fork()
    if pid == 0:
        os._exit(raw(nr, *args)[1])
    print(f"{name}={os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])}", flush=True)
def attach_own_child():
    pid = os.fork()
    if pid == 0:
        time.sleep(30)
        os._exit(0)
    err = raw(101, 16, pid, 0, 0)[1]    # PTRACE_ATTACH to our own sleeping child
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    print(f"ptrace_attach={err}", flush=True)
SIGCHLD = 17
in_child('ptrace_traceme', 101, 0, 0, 0, 0)             # PTRACE_TRACEME: 0 if let through
attach_own_child()                                      # 0 if let through (same user)
call('keyctl_session', 250, 0, -3, 0)                   # KEYCTL_GET_KEYRING_ID, session keyring, no create
call('add_key', 248, 0, 0, 0, 0, 0)                     # NULL type: EFAULT if let through
call('request_key', 249, 0, 0, 0, 0)
call('bpf_bad_cmd', 321, 9999, 0, 0)                    # no such command
call('perf_event_open', 298, 0, 0, -1, -1, 0)           # NULL attr: EFAULT if let through
call('setns', 308, -1, 0)                               # bad fd: EBADF if let through
call('userfaultfd', 323, 0xffffffff)                    # bad flags
call('mount', 165, 0, 0, 0, 0, 0)
call('umount2', 166, 0, 0)
call('pivot_root', 155, 0, 0)
call('init_module', 175, 0, 0, 0)
call('finit_module', 313, -1, 0, 0)
call('kexec_load', 246, 0, 0, 0, 0)
call('reboot', 169, 0, 0, 0, 0)                          # bad magic: EINVAL even with CAP_SYS_BOOT
call('swapon', 167, 0, 0)
call('acct', 163, 0)
call('open_by_handle_at', 304, -1, 0, 0)
call('syslog', 103, 10, 0, 0)                            # SYSLOG_ACTION_SIZE_BUFFER: a harmless read
call('clock_settime', 227, 99, 0)                        # bad clock: EINVAL if let through
call('unshare_user', 272, 0x10000000)                   # CLONE_NEWUSER (this process only)
call('unshare_mount', 272, 0x00020000)                  # CLONE_NEWNS (this process only)
call('clone_user', 56, 0x10000000 | SIGCHLD, 0, 0, 0, 0)
call('clone_net', 56, 0x40000000 | SIGCHLD, 0, 0, 0, 0)
call('clone3', 435, 0, 0)
call('fork', 56, SIGCHLD, 0, 0, 0, 0)                    # the control: a plain fork works
`;

/** Runs `command` in the task through the driver's exec path once its sandbox is up; the exit code. */
async function execIn(s: Sandbox, taskId: string, command: string[]): Promise<number> {
  for (let i = 0; ; i++) {
    try {
      return await runExecSpec(s.driver.execSpec(taskId, command), 20_000);
    } catch (err) {
      // Right after the start, bwrap may not have forked the sandbox's first process yet.
      if ((err as { code?: string }).code !== 'DRIVER_TASK_NOT_FOUND' || i >= 100) throw err;
      await sleep(50);
    }
  }
}

const EPERM = '1';
const ENOSYS = '38';

for (const user of USERS) {
  test(`exec sandbox (${user}): /proc/sys and the other global kernel knobs cannot be opened for writing`, async () => {
    const knobs = ['/proc/sys/kernel/core_pattern', '/proc/sys/kernel/modprobe', '/proc/sys/vm/drop_caches', '/proc/irq/default_smp_affinity', '/proc/sysrq-trigger'];
    const present = knobs.filter((k) => existsSync(k));
    assert.ok(present.includes('/proc/sys/kernel/core_pattern'));
    const before = readFileSync('/proc/sys/kernel/core_pattern', 'utf8');
    // Open for appending and close without writing a byte: a sysctl acts on write() only.
    const script = present.map((k) => `if err=$( (exec 3>>${k}) 2>&1 ); then echo "${k}=OPENED"; else echo "${k}=$err"; fi`).join('\n');
    const { out } = await runScript(main, user, script);
    assert.equal(readFileSync('/proc/sys/kernel/core_pattern', 'utf8'), before, 'the host value is untouched');
    const got = lines(out);
    for (const k of present) {
      const r = got.get(k);
      assert.ok(r !== undefined && r !== 'OPENED', `${k} must not open for writing as ${user}: ${r}`);
      // As root, DAC would allow it: only the read-only mount stops it.
      if (user === 'root') assert.match(r, /Read-only file system/, k);
    }
  });

  test(`exec sandbox (${user}): kernel memory, keyrings, timers and firmware in /proc are masked`, async () => {
    const files = ['/proc/kcore', '/proc/keys', '/proc/timer_list', '/proc/sched_debug', '/proc/latency_stats', '/proc/timer_stats'].filter((f) => existsSync(f));
    const dirs = ['/proc/acpi', '/proc/scsi', '/proc/asound'].filter((d) => existsSync(d));
    assert.ok(files.length > 0 && dirs.length > 0, 'this kernel has something to mask');
    const script = [
      ...files.map((f) => `echo "${f}=$(head -c 4096 ${f} 2>/dev/null | wc -c)"`),
      ...dirs.map((d) => `echo "${d}=$(ls -A ${d} 2>/dev/null | wc -l)"`),
      ...dirs.map((d) => `touch ${d}/planted 2>/dev/null && echo "${d}/planted=WROTE" || echo "${d}/planted=refused"`),
    ].join('\n');
    const got = lines((await runScript(main, user, script)).out);
    for (const f of files) assert.equal(got.get(f), '0', `${f} reads empty`);
    for (const d of dirs) {
      assert.equal(got.get(d), '0', `${d} is empty`);
      assert.equal(got.get(`${d}/planted`), 'refused');
    }
    // The control: on the host (not masked) timer_list has content.
    if (existsSync('/proc/timer_list')) assert.ok(readFileSync('/proc/timer_list', 'utf8').length > 0);
  });

  test(`exec sandbox (${user}): no nested user namespace, no other namespace, no mount`, async () => {
    const script = [
      'unshare -Ur true 2>/dev/null && echo "unshare-Ur=OK" || echo "unshare-Ur=refused"',
      'unshare -U true 2>/dev/null && echo "unshare-U=OK" || echo "unshare-U=refused"',
      'unshare -Urm sh -c "mount -t tmpfs none /tmp && echo NESTED-MOUNT" 2>/dev/null; echo "nested-mount=done"',
      'unshare -m true 2>/dev/null && echo "unshare-m=OK" || echo "unshare-m=refused"',
      'unshare -n true 2>/dev/null && echo "unshare-n=OK" || echo "unshare-n=refused"',
      'mkdir -p /tmp/m; mount -t tmpfs none /tmp/m 2>/dev/null && echo "mount=OK" || echo "mount=refused"',
    ].join('\n');
    const { out } = await runScript(main, user, script);
    const got = lines(out);
    for (const k of ['unshare-Ur', 'unshare-U', 'unshare-m', 'unshare-n', 'mount']) assert.equal(got.get(k), 'refused', `${k} as ${user}`);
    assert.doesNotMatch(out, /NESTED-MOUNT/);
  });

  test(`exec sandbox (${user}): the seccomp filter refuses the dangerous syscalls (EPERM) and clone3 (ENOSYS)`, async (t) => {
    if (!hasPython) return t.skip(`${PYTHON} is missing: the raw syscall probes need it`);
    const { out, exitCode } = await runScript(main, user, `exec ${PYTHON} -c '${SYSCALL_PROBE.replace(/'/g, `'"'"'`)}'`);
    assert.equal(exitCode, 0, out);
    const got = Object.fromEntries(lines(out));
    assert.equal(Object.keys(got).length, 27, out);
    // Every probe answers EPERM, but the control fork (0) and clone3 (ENOSYS: libc falls back to clone).
    const expected = Object.fromEntries(Object.keys(got).map((k) => [k, k === 'fork' ? '0' : k === 'clone3' ? ENOSYS : EPERM]));
    assert.deepEqual(got, expected, `as ${user}`);
  });

  test(`exec sandbox (${user}): an alloc exec session is under the same filter`, async (t) => {
    const config = mockTaskConfig(main.root, { command: '/bin/sleep', args: ['60'] }, { user });
    const handle = await main.driver.startTask(config);
    try {
      assert.equal(await execIn(main, handle.taskId, ['/bin/true']), 0, 'the exec path works');
      assert.notEqual(await execIn(main, handle.taskId, ['unshare', '-Ur', 'true']), 0, 'unshare -Ur through exec');
      assert.notEqual(await execIn(main, handle.taskId, ['/bin/sh', '-c', 'exec 3>>/proc/sys/kernel/core_pattern']), 0);
      if (!hasPython) return t.skip(`${PYTHON} is missing: the ptrace probe needs it`);
      // PTRACE_TRACEME in a child that exits at once: harmless if let through (exit 100).
      const ptrace = 'import ctypes, os, sys\nif os.fork() == 0:\n  l = ctypes.CDLL(None, use_errno=True)\n  os._exit(ctypes.get_errno() if l.syscall(101, 0, 0, 0, 0) < 0 else 100)\nsys.exit(os.waitstatus_to_exitcode(os.wait()[1]))';
      assert.equal(await execIn(main, handle.taskId, [PYTHON, '-c', ptrace]), 1, 'ptrace answers EPERM in an exec session');
    } finally {
      await main.driver.destroyTask(handle.taskId, true);
    }
  });
}

test('exec sandbox: an exec the moment a task starts enters the built sandbox, never a half-built one whose root is the host\'s', async () => {
  // bwrap's child exists before it has moved its root onto the task directory; an exec aimed at it
  // then ran in the host's filesystem. The host side of this file is one the test made.
  const marker = join(main.root, 'host-only-marker');
  writeFileSync(marker, 'host');
  for (let round = 0; round < 15; round++) {
    const config = mockTaskConfig(main.root, { command: '/bin/sleep', args: ['60'] });
    const handle = await main.driver.startTask(config);
    try {
      // Not execIn's pacing: ask again at once while the sandbox is being built.
      for (let i = 0; ; i++) {
        try {
          const code = await runExecSpec(main.driver.execSpec(handle.taskId, ['/bin/sh', '-c', `test -e ${marker} && exit 42; test -d /local || exit 43; exit 0`]), 20_000);
          assert.equal(code, 0, `round ${round}: the exec ran outside the sandbox (${code === 42 ? 'the host file was visible' : 'no task directory at /'})`);
          break;
        } catch (err) {
          if ((err as { code?: string }).code !== 'DRIVER_TASK_NOT_FOUND' || i >= 2000) throw err;
          await sleep(1);
        }
      }
    } finally {
      await main.driver.destroyTask(handle.taskId, true);
    }
  }
});

test('exec sandbox: a fork bomb stops at the pids limit (and the default limit is 4096)', async () => {
  const bombing = sandbox({ pids_limit: BOMB_PIDS_LIMIT });
  const config = mockTaskConfig(bombing.root, { command: '/bin/sh', args: ['-c', 'b() { b | b & }; b; sleep 60'] });
  const handle = await bombing.driver.startTask(config);
  try {
    const pidsDir = (handle.state as { cgroupDirs: string[] }).cgroupDirs.find((d) => existsSync(join(d, 'pids.max')));
    assert.ok(pidsDir, 'the task has a pids cgroup');
    assert.equal(readFileSync(join(pidsDir, 'pids.max'), 'utf8').trim(), String(BOMB_PIDS_LIMIT));
    let events = '';
    for (let i = 0; i < 200 && !/^max [1-9]/m.test(events); i++) {
      await sleep(50);
      events = readFileSync(join(pidsDir, 'pids.events'), 'utf8');
    }
    assert.match(events, /^max [1-9]/m, 'forks were refused at the limit');
    assert.ok(Number(readFileSync(join(pidsDir, 'pids.current'), 'utf8')) <= BOMB_PIDS_LIMIT);
  } finally {
    await bombing.driver.destroyTask(handle.taskId, true);
  }

  // Without a pids_limit in the plugin config, a task still gets the default limit.
  const config2 = mockTaskConfig(main.root, { command: '/bin/sleep', args: ['60'] });
  const handle2 = await main.driver.startTask(config2);
  try {
    const dirs = (handle2.state as { cgroupDirs: string[] }).cgroupDirs;
    const pidsDir = dirs.find((d) => existsSync(join(d, 'pids.max')));
    assert.ok(pidsDir, `a pids cgroup among ${dirs.join(', ')}`);
    assert.equal(readFileSync(join(pidsDir, 'pids.max'), 'utf8').trim(), String(DEFAULT_PIDS_LIMIT));
    assert.equal(DEFAULT_PIDS_LIMIT, 4096);
  } finally {
    await main.driver.destroyTask(handle2.taskId, true);
  }
});

test('exec sandbox: the filter descriptor does not leak into the task', async () => {
  const { out } = await runScript(main, 'nobody', 'ls /proc/self/fd | tr "\\n" " "; echo');
  const fds = out.trim().split(/\s+/).map(Number);
  assert.ok(!fds.includes(9), `fd 9 (the seccomp filter) is closed in the task: ${out}`);
  assert.ok(readdirSync(join(main.root, 'data', 'exec')).includes('seccomp-task.bpf'));
});
