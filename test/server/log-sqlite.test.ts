import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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
