/**
 * Issue 27: an exec'd command without a terminal gets anonymous pipes as its stdin, stdout and
 * stderr (Nomad's executor's os.Pipe), not Node's socket pairs — through the exec spawner on a
 * cold spawn and on a warm shell, and when the agent spawns the command itself. The checks are
 * in test/helpers/pipe-stdio-checks.ts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ExecSpec, ExecStream, ExecStreamEvents } from '../../src/drivers/driver.js';
import { startPipeProcess } from '../../src/http/exec/exec-process.js';
import { ExecSpawner } from '../../src/http/exec/exec-spawner.js';
import { startCommand } from '../../src/http/exec/start-command.js';
import { WarmShellPool } from '../../src/http/exec/warm-shell-pool.js';
import { checkPipeStdio, type BytesResult, type RunExec } from '../helpers/pipe-stdio-checks.js';

const ENV = { PATH: process.env.PATH ?? '/usr/bin:/bin' };

function runner(start: (spec: ExecSpec, events: ExecStreamEvents) => ExecStream, cwd: string, pause = 0): RunExec {
  return async (cmd, input) => {
    // Spaced sessions let the spawner warm a shell for the next one.
    if (pause) await new Promise((r) => setTimeout(r, pause));
    return new Promise<BytesResult>((resolve) => {
      const out: Buffer[] = [];
      const err: Buffer[] = [];
      const p = start({ file: cmd[0]!, args: cmd.slice(1), cwd, env: ENV }, {
        onOutput: (s, d) => (s === 'stdout' ? out : err).push(Buffer.from(d)),
        onExit: (code) => resolve({ stdout: Buffer.concat(out), stderr: Buffer.concat(err).toString(), code }),
      });
      if (input !== undefined) {
        p.write(input);
        p.closeStdin();
      }
    });
  };
}

test('exec stdio are pipes: spawned by the exec spawner, back to back (cold spawns)', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'caravan-stdio-'));
  const spawner = new ExecSpawner();
  try {
    await checkPipeStdio(runner((spec, ev) => spawner.start(spec, false, ev), dir), dir, join(dir, 'x'));
  } finally {
    spawner.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('exec stdio are pipes: on warm shells', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'caravan-stdio-'));
  const pool = new WarmShellPool();
  let warm = 0;
  const take = pool.start.bind(pool);
  pool.start = (spec, tty) => {
    const started = take(spec, tty);
    if (started) warm++;
    return started;
  };
  try {
    // Every session has the same directory and environment: after the first, each one spaced
    // from the last finds a shell forked for it.
    await checkPipeStdio(runner((spec, ev) => startCommand(pool, spec, false, ev), dir, 80), dir, join(dir, 'x'));
    assert.ok(warm >= 5, `sessions on warm shells: ${warm}`);
  } finally {
    pool.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('exec stdio are pipes: spawned by the agent itself (no spawner)', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'caravan-stdio-'));
  try {
    await checkPipeStdio(runner((spec, ev) => startPipeProcess(spec, ev), dir), dir, join(dir, 'x'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('exec on pipes: a killed command ends the session with 137 and its pipes are closed', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'caravan-stdio-'));
  const spawner = new ExecSpawner();
  try {
    const code = await new Promise<number>((resolve) => {
      let out = '';
      const p = spawner.start({ file: 'sh', args: ['-c', 'echo up; exec sleep 300'], cwd: dir, env: ENV }, false, {
        onOutput: (_s, d) => {
          out += d.toString();
          if (out.includes('up')) p.kill();
        },
        onExit: resolve,
      });
    });
    assert.equal(code, 137);
  } finally {
    spawner.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
