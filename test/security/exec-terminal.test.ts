/**
 * Hostile `alloc exec` sessions on a terminal in the exec sandbox: a command in one session
 * tries to reach another session's terminal — a host pty, held by the same process that holds
 * its own — through /dev/pts, a device node of its own making (root in the sandbox keeps
 * CAP_MKNOD and CAP_DAC_OVERRIDE) and the descriptors of the sandbox's processes (the relay,
 * script(1), holds its session's host pty). It must reach none, and its own terminal must be
 * the sandbox's, not a host pty.
 *
 * Needs root, bwrap, script(1) and writable cgroups, as the exec driver's terminal sessions do.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ExecSpec } from '../../src/drivers/driver.js';
import { createExecDriver, type ExecDriver } from '../../src/drivers/exec/exec-driver.js';
import { supervisorPaths } from '../../src/drivers/supervisor/protocol.js';
import { startPtyProcess } from '../../src/http/exec/pty-process.js';
import { mockTaskConfig, tempRoot } from '../drivers/task-config.js';

let root: string;
let driver: ExecDriver;

before(() => {
  root = tempRoot('cv-tty-');
  driver = createExecDriver({ dataDir: join(root, 'data'), supervisorIdleMs: 1_500 });
});

after(async () => {
  await driver.shutdown();
  try {
    const pid = Number(readFileSync(supervisorPaths(join(root, 'data')).pidFile, 'utf8'));
    if (pid > 0) process.kill(pid, 'SIGTERM');
  } catch {
    // Already gone.
  }
  rmSync(root, { recursive: true, force: true });
});

/** A session on a terminal: its output so far, and its end. */
interface Session {
  output(): string;
  exited: Promise<number>;
  kill(): void;
}

function onTerminal(spec: ExecSpec): Session {
  let out = '';
  let resolveExit!: (code: number) => void;
  const exited = new Promise<number>((r) => (resolveExit = r));
  const p = startPtyProcess(spec, { width: 100, height: 30 }, { onOutput: (_s, d) => (out += d.toString()), onExit: resolveExit });
  return { output: () => out, exited, kill: () => p.kill() };
}

async function until<T>(what: string, fn: () => T | undefined, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

/** The driver's exec spec for `command`, once the task's sandbox has its first process. */
async function execSpec(taskId: string, command: string[]): Promise<ExecSpec> {
  for (let i = 0; ; i++) {
    try {
      return driver.execSpec(taskId, command);
    } catch (err) {
      if ((err as { code?: string }).code !== 'DRIVER_TASK_NOT_FOUND' || i >= 100) throw err;
      await sleep(50);
    }
  }
}

/**
 * Tries every way at the host pty `/dev/pts/$1` from inside, writing MARK to whatever opens,
 * and says what its own terminal is.
 */
const ATTACK = `
victim=$1
echo "tty=$(tty)"
echo "stdin-dev=$(stat -L -c %d /dev/stdin) own-devpts=$(stat -c %d /dev/pts/ptmx)"
for f in /dev/pts/[0-9]* "/dev/pts/$victim"; do
  [ "$f" = "$(tty)" ] && continue
  printf 'MARK-pts ' 2>/dev/null >"$f" && echo "opened $f"
done
if mknod /tmp/victim-pty c 136 "$victim" 2>/dev/null; then
  printf 'MARK-mknod ' 2>/dev/null >/tmp/victim-pty && echo "opened a node of the victim's device"
  rm -f /tmp/victim-pty
fi
for l in /proc/[0-9]*/fd/*; do
  [ -c "$l" ] && printf 'MARK-proc ' 2>/dev/null >"$l" && echo "opened $l -> $(readlink "$l")"
done
echo attack-done
`;

for (const user of ['root', 'nobody']) {
  test(`exec terminal (${user}): a session's command cannot reach another session's host pty, and its own is the sandbox's`, async (t) => {
    const config = mockTaskConfig(root, { command: '/bin/sleep', args: ['3600'] }, { user });
    const handle = await driver.startTask(config);
    // The other session: a host command on a terminal of the same spawner, as raw_exec's are.
    const victim = onTerminal({ file: '/bin/sh', args: ['-c', 'tty; exec sleep 600'], cwd: root, env: { PATH: '/usr/bin:/bin' } });
    try {
      const victimPty = await until('the victim terminal', () => /\/dev\/pts\/(\d+)/.exec(victim.output())?.[1]);
      const attacker = onTerminal(await execSpec(handle.taskId, ['/bin/sh', '-c', ATTACK, 'attack', victimPty]));
      const code = await attacker.exited;
      const out = attacker.output().replace(/\r/g, '');
      assert.equal(code, 0, out);
      assert.match(out, /attack-done/);
      assert.match(out, /^tty=\/dev\/pts\/\d+$/m, `the session's terminal has a name inside: ${out}`);
      for (const line of out.split('\n').filter((l) => l.startsWith('opened'))) t.diagnostic(line);
      const devs = /stdin-dev=(\d+) own-devpts=(\d+)/.exec(out);
      assert.ok(devs, out);
      assert.equal(devs[1], devs[2], "the session's terminal is on the sandbox's own devpts");
      assert.notEqual(Number(devs[1]), statSync(`/dev/pts/${victimPty}`).dev, "the session's terminal is not a host pty");
      // The relay holds this session's host pty: through /proc it reaches that one at most, never the victim's.
      victim.kill();
      await victim.exited;
      assert.doesNotMatch(victim.output(), /MARK/, `the victim's terminal got what the sandbox wrote; attacker: ${out}`);
    } finally {
      victim.kill();
      await driver.destroyTask(handle.taskId, true);
    }
  });
}
