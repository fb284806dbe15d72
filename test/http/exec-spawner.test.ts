import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { ExecSpawner } from '../../src/http/exec/exec-spawner.js';

/** Runs a command through `spawner`; resolves with its output and exit code. */
function run(spawner: ExecSpawner, file: string, args: string[], tty = false, onStart?: (out: () => string) => void): Promise<{ out: string; code: number }> {
  return new Promise((resolve) => {
    let out = '';
    spawner.start({ file, args, cwd: tmpdir(), env: { PATH: process.env.PATH ?? '/usr/bin:/bin' } }, tty, {
      onOutput: (_s, d) => (out += d.toString()),
      onExit: (code) => resolve({ out, code }),
    });
    onStart?.(() => out);
  });
}

const alive = (pid: number): boolean => {
  try {
    return !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, 'utf8'));
  } catch {
    return false;
  }
};

test('exec spawner: commands are forked by the small helper, not by this process, on pipes and on a terminal', async () => {
  const spawner = new ExecSpawner();
  try {
    const r = await run(spawner, '/bin/sh', ['-c', 'echo $PPID; echo err >&2; exit 3']);
    assert.equal(r.code, 3);
    const ppid = Number(r.out.split('\n')[0]);
    assert.notEqual(ppid, process.pid);
    assert.match(readFileSync(`/proc/${ppid}/cmdline`, 'utf8'), /exec-spawner-main/);
    assert.match(r.out, /err/);
    const t = await run(spawner, '/bin/sh', ['-c', 'tty'], true);
    assert.equal(t.code, 0);
    assert.match(t.out, /\/dev\/pts\//);
  } finally {
    spawner.close();
  }
});

test('exec spawner: closing it kills the commands it runs and ends their sessions', async () => {
  const spawner = new ExecSpawner();
  let output = (): string => '';
  const done = run(spawner, '/bin/sh', ['-c', 'echo $$; exec sleep 30'], false, (out) => (output = out));
  for (let i = 0; i < 250 && !/^\d+\n/.test(output()); i++) await new Promise((r) => setTimeout(r, 20));
  const pid = Number(output().split('\n')[0]);
  assert.ok(pid > 0 && alive(pid), `command started (${output()})`);
  spawner.close();
  const r = await done;
  assert.notEqual(r.code, 0);
  for (let i = 0; i < 100 && alive(pid); i++) await new Promise((res) => setTimeout(res, 20));
  assert.equal(alive(pid), false, `command ${pid} outlived the spawner`);
});
