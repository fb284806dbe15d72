import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { SqliteLogBackend } from '../../src/server/log/sqlite-log-backend.js';
import { runLogConformance } from './log-conformance.js';

runLogConformance({
  name: 'sqlite (embedded)',
  async open() {
    const dir = mkdtempSync(join(tmpdir(), 'caravan-log-'));
    return {
      backend: SqliteLogBackend.open(dir),
      reopen: async () => SqliteLogBackend.open(dir),
      cleanup: async () => rmSync(dir, { recursive: true, force: true }),
    };
  },
});

test('sqlite log: appends from many turns, committed on the append worker while compaction runs, come back in order after a reopen', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'caravan-log-'));
  try {
    const log = SqliteLogBackend.open(dir);
    const acked: Promise<number[]>[] = [];
    for (let i = 0; i < 200; i++) {
      acked.push(log.append([{ type: 'T', payload: `p${i}` }]));
      // Some appends in later turns, while earlier commits are in flight on the worker.
      if (i % 17 === 0) await new Promise((r) => setImmediate(r));
      if (i === 120) await log.compact(50);
    }
    const indexes = (await Promise.all(acked)).flat();
    assert.deepEqual(indexes, Array.from({ length: 200 }, (_, i) => i + 1));
    // Queued appends the caller did not wait for are committed by close.
    const late = log.append([{ type: 'T', payload: 'late' }]);
    await log.close();
    assert.deepEqual(await late, [201]);
    const again = SqliteLogBackend.open(dir);
    const entries = await again.read(51);
    assert.deepEqual(entries.map((e) => e.payload), [...Array.from({ length: 150 }, (_, i) => `p${i + 50}`), 'late']);
    assert.equal(await again.lastIndex(), 201);
    await again.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

/** Mounts a tmpfs of `size` at a new dir; null where mounting is not permitted (not root). */
function mountTmpfs(size: string): string | null {
  const dir = mkdtempSync(join(tmpdir(), 'caravan-full-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir], { stdio: 'ignore' });
    return dir;
  } catch {
    rmSync(dir, { recursive: true, force: true });
    return null;
  }
}

test('sqlite log: on a full disk an append fails with "database or disk is full", and the log goes on once space is freed', async (t) => {
  const dir = mountTmpfs('2m');
  if (!dir) {
    t.skip('mounting a tmpfs needs root');
    return;
  }
  try {
    const log = SqliteLogBackend.open(dir);
    await log.append([{ type: 'T', payload: 'first' }]);
    // Fill the rest of the tmpfs with a file of our own.
    const filler = join(dir, 'filler');
    try {
      execFileSync('dd', ['if=/dev/zero', `of=${filler}`, 'bs=64k'], { stdio: 'ignore' });
    } catch {
      // dd stops at "No space left on device": the disk is full.
    }
    let failure: Error | null = null;
    for (let i = 0; i < 50 && !failure; i++) {
      await log.append([{ type: 'T', payload: 'x'.repeat(64 * 1024) }]).catch((err: Error) => (failure = err));
    }
    assert.ok(failure, 'an append on a full disk failed');
    const message = (failure as Error).message;
    assert.match(message, /database or disk is full|disk I\/O error/);
    assert.doesNotMatch(message, /rollback/);
    rmSync(filler);
    const [index] = await log.append([{ type: 'T', payload: 'after' }]);
    assert.deepEqual((await log.read(index!)).map((e) => e.payload), ['after']);
    await log.close();
  } finally {
    execFileSync('umount', ['-l', dir], { stdio: 'ignore' });
    rmSync(dir, { recursive: true, force: true });
  }
});
