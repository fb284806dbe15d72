import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { ExecSpawner } from '../../src/http/exec/exec-spawner.js';
import type { ExecStream } from '../../src/drivers/driver.js';
import { WarmShellPool } from '../../src/http/exec/warm-shell-pool.js';
import { attachPipeProcess } from '../../src/http/exec/exec-process.js';
import { attachPtyProcess } from '../../src/http/exec/pty-process.js';
import { sharedPipeStock } from '../../src/http/exec/pipe-stock.js';
import { startCommand } from '../../src/http/exec/start-command.js';
import type { ExecSpec } from '../../src/drivers/driver.js';

const ENV = { PATH: process.env.PATH ?? '/usr/bin:/bin', CARAVAN_TEST: 'a b\'c"$d' };

/** Runs `spec` through `spawner`; resolves with its output and exit code. */
function run(spawner: ExecSpawner, spec: Omit<ExecSpec, 'cwd' | 'env'>, tty = false, onStart?: (p: ExecStream, out: () => string) => void): Promise<{ out: string; code: number }> {
  return new Promise((resolve) => {
    let out = '';
    const p = spawner.start({ ...spec, cwd: tmpdir(), env: ENV }, tty, {
      onOutput: (_s, d) => (out += d.toString()),
      onExit: (code) => resolve({ out, code }),
    });
    onStart?.(p, () => out);
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The targets of the descriptors `out` (an `ls -l /proc/self/fd` listing) shows. */
function fdTargets(out: string): string[] {
  return [...out.matchAll(/-> (.+?)\r?$/gm)].map((m) => m[1]!.replace(/^'|'$/g, ''));
}

test('exec: no command inherits the terminal of another session (pipes, terminals, warm or not)', async () => {
  const spawner = new ExecSpawner();
  try {
    let output = (): string => '';
    // A terminal session that stays open: its master end is held by the spawner meanwhile.
    const holder = run(spawner, { file: '/bin/sh', args: ['-c', 'echo up; read x'] }, true, (p, out) => {
      output = out;
      setTimeout(() => p.closeStdin(), 3000);
    });
    for (let i = 0; i < 250 && !output().includes('up'); i++) await sleep(10);
    for (const tty of [false, true, false, true]) {
      const r = await run(spawner, { file: '/bin/ls', args: ['-l', '/proc/self/fd'] }, tty);
      assert.equal(r.code, 0, r.out);
      const targets = fdTargets(r.out);
      assert.ok(targets.length >= 3, r.out);
      assert.ok(!targets.includes('/dev/ptmx'), `a terminal master leaked into a ${tty ? 'terminal' : 'pipe'} session:\n${r.out}`);
      const ptys = targets.filter((t) => t.startsWith('/dev/pts/'));
      assert.ok(new Set(ptys).size <= 1, `another session's terminal leaked:\n${r.out}`);
      await sleep(30); // let the spawner warm a shell, so both paths are covered
    }
    await holder;
  } finally {
    spawner.close();
  }
});

test('exec: a warm shell runs the command exactly as a spawn would (argv, environment, PWD, exit code)', async () => {
  const pool = new WarmShellPool();
  // The shells' pipes are in stock before the first refill (as in the spawner, which asks at start).
  await sharedPipeStock().ready();
  try {
    const spec: ExecSpec = { file: 'printf', args: ['[%s]', 'a b', "it's", '$HOME', '`id`', '\\n', ''], cwd: tmpdir(), env: ENV };
    assert.equal(pool.start(spec, false), undefined, 'the first session of a task is cold');
    await sleep(50); // idle: the pool forks a shell for the task
    const started = pool.start(spec, false);
    assert.ok(started, 'a warm shell was ready');
    const r = await new Promise<{ out: string; code: number }>((resolve) => {
      let out = '';
      attachPipeProcess(started.child, started.io!, spec, { onOutput: (_s, d) => (out += d.toString()), onExit: (code) => resolve({ out, code }) });
    });
    assert.equal(r.code, 0);
    assert.equal(r.out, "[a b][it's][$HOME][`id`][\\n][]");

    const envSpec: ExecSpec = { file: '/usr/bin/env', args: [], cwd: tmpdir(), env: ENV };
    pool.start(envSpec, false);
    await sleep(50);
    const e = pool.start(envSpec, false);
    assert.ok(e);
    const env = await new Promise<string>((resolve) => {
      let out = '';
      attachPipeProcess(e.child, e.io!, envSpec, { onOutput: (_s, d) => (out += d.toString()), onExit: () => resolve(out) });
    });
    assert.deepEqual(env.trim().split('\n').sort(), Object.entries(ENV).map(([k, v]) => `${k}=${v}`).sort(), 'no PWD or other variable added by the shell');

    const failing: ExecSpec = { file: '/bin/sh', args: ['-c', 'exit 7'], cwd: tmpdir(), env: ENV };
    pool.start(failing, false);
    await sleep(50);
    const f = pool.start(failing, false);
    assert.ok(f);
    const code = await new Promise<number>((resolve) => attachPipeProcess(f.child, f.io!, failing, { onOutput: () => {}, onExit: resolve }));
    assert.equal(code, 7);

    // A word with a newline cannot go through the shell's one line: it is spawned cold.
    const multiline: ExecSpec = { file: 'printf', args: ['a\nb'], cwd: tmpdir(), env: ENV };
    pool.start(multiline, false);
    await sleep(50);
    assert.equal(pool.start(multiline, false), undefined);
  } finally {
    pool.close();
  }
});

test('exec: a warm terminal shell gives the command the terminal as its controlling terminal', async () => {
  const pool = new WarmShellPool();
  try {
    const spec: ExecSpec = { file: '/bin/sh', args: ['-c', 'tty; ps -o tty=,stat= -p $$; echo "T=$TERM"; sleep 10'], cwd: tmpdir(), env: { ...ENV, TERM: 'vt100' } };
    pool.start(spec, true);
    await sleep(50);
    const started = pool.start(spec, true);
    assert.ok(started?.master !== undefined, 'a warm terminal shell was ready');
    const r = await new Promise<{ out: string; code: number }>((resolve) => {
      let out = '';
      let interrupted = false;
      const p = attachPtyProcess({ child: started.child, master: started.master! }, spec, {
        onOutput: (_s, d) => {
          out += d.toString();
          // ^C reaches the foreground process group through the controlling terminal.
          if (out.includes('T=vt100') && !interrupted) {
            interrupted = true;
            p.write(Buffer.from('\x03'));
          }
        },
        onExit: (code) => resolve({ out, code }),
      });
    });
    assert.match(r.out, /^\/dev\/pts\/\d+\r\n/);
    // Session leader (s) in the foreground process group (+) of its terminal.
    assert.match(r.out, /pts\/\d+\s+[A-Z]+s\+/);
    assert.equal(r.code, 130, r.out);
  } finally {
    pool.close();
  }
});

test('exec: an unused warm shell ends with the pool and with the spawner', async () => {
  const pool = new WarmShellPool();
  const spec: ExecSpec = { file: '/bin/true', args: [], cwd: tmpdir(), env: ENV };
  pool.start(spec, false);
  await sleep(50);
  assert.ok(warmShells().length > 0, 'a warm shell is running');
  pool.close();
  for (let i = 0; i < 100; i++) {
    if (warmShells().length === 0) return;
    await sleep(20);
  }
  assert.fail('the warm shell outlived the pool');
});

/** This process's children. */
function children(): number[] {
  return readFileSync(`/proc/${process.pid}/task/${process.pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
}

/** This process's children that are warm shells (not, say, the shell that makes stdio pipes). */
function warmShells(): number[] {
  return children().filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('read -r line');
    } catch {
      return false;
    }
  });
}

/** Waits, without yielding to the event loop, until `pid` is a zombie: dead, exit not yet handled. */
function waitUntilDead(pid: number): void {
  const deadline = Date.now() + 5000;
  while (!/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'))) {
    if (Date.now() > deadline) assert.fail(`process ${pid} did not die`);
  }
}

test('exec: a warm shell that died while it waited is not taken for the command (pipes and terminal)', async () => {
  const pool = new WarmShellPool();
  try {
    for (const tty of [false, true]) {
      const spec: ExecSpec = { file: 'echo', args: ['hi'], cwd: tmpdir(), env: ENV };
      const runOnce = (): Promise<{ out: string; code: number }> =>
        new Promise((resolve) => {
          let out = '';
          startCommand(pool, spec, tty, { onOutput: (_s, d) => (out += d.toString()), onExit: (code) => resolve({ out, code }) });
        });
      assert.equal((await runOnce()).code, 0, 'the first session is cold');
      await sleep(50); // idle: the pool forks a shell for the task
      const waiting = children().filter((pid) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('read -r line'));
      assert.ok(waiting.length > 0, 'a warm shell waits');
      // Killed from outside; the pool has not seen their exits when the next session comes.
      for (const pid of waiting) process.kill(pid, 'SIGKILL');
      for (const pid of waiting) waitUntilDead(pid);
      const r = await runOnce();
      assert.equal(r.code, 0, `the session reported the dead shell: ${JSON.stringify(r)}`);
      assert.match(r.out, /^hi\r?\n$/);
    }
  } finally {
    pool.close();
  }
});
