/**
 * runExecSpec with real processes: the exit code, the directory and environment the spec
 * gives, a signal's 128 + n, a command that cannot start, a timeout that kills the command, and
 * a driver's own start function (a container's exec) used instead of a host process.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runExecSpec } from '../../src/drivers/run-exec-spec.js';
import type { ExecStreamEvents } from '../../src/drivers/driver.js';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('runExecSpec', () => {
  it('runs the command in the spec\'s directory and environment and answers its exit code', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'caravan-run-exec-'));
    try {
      const code = await runExecSpec({ file: 'sh', args: ['-c', 'echo "$GREETING" > here.txt; exit 7'], cwd: dir, env: { GREETING: 'hi', PATH: '/usr/bin:/bin' } }, 5_000);
      assert.equal(code, 7);
      assert.equal(await readFile(join(dir, 'here.txt'), 'utf8'), 'hi\n');
      assert.equal(await runExecSpec({ file: '/bin/sh', args: ['-c', 'kill -TERM $$'], cwd: dir, env: {} }, 5_000), 128 + 15);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('rejects a command that cannot start, and one that outlives its timeout, which is killed', async () => {
    await assert.rejects(runExecSpec({ file: '/nonexistent/reload', args: [], cwd: '/', env: {} }, 5_000), /ENOENT/);
    // Refused synchronously: rejected, and no timer is left behind to keep the process alive.
    await assert.rejects(runExecSpec({ file: '', args: [], cwd: '/', env: {} }, 3_600_000), /file/);
    const dir = await mkdtemp(join(tmpdir(), 'caravan-run-exec-'));
    try {
      const pidFile = join(dir, 'pid');
      await assert.rejects(runExecSpec({ file: '/bin/sh', args: ['-c', `echo $$ > ${pidFile}; exec sleep 30`], cwd: dir, env: {} }, 300), /timed out after 300ms/);
      const pid = Number(await readFile(pidFile, 'utf8'));
      for (let i = 0; i < 100 && alive(pid); i++) await new Promise((r) => setTimeout(r, 20));
      assert.equal(alive(pid), false, 'the timed-out command was killed');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('uses the driver\'s start function when the spec has one, without a terminal and with stdin closed', async () => {
    const seen: string[] = [];
    const code = await runExecSpec(
      {
        file: 'unused',
        args: [],
        cwd: '/',
        env: {},
        start: (tty: boolean, events: ExecStreamEvents) => {
          seen.push(`tty=${tty}`);
          return {
            write: () => {},
            closeStdin: () => {
              seen.push('stdin closed');
              setImmediate(() => events.onExit(4));
            },
            resize: () => {},
            kill: () => seen.push('killed'),
          };
        },
      },
      5_000,
    );
    assert.equal(code, 4);
    assert.deepEqual(seen, ['tty=false', 'stdin closed']);
  });
});
