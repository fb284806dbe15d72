import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { SqliteLogBackend } from '../../src/server/log/sqlite-log-backend.js';
import { runLogConformance } from './log-conformance.js';
import { SqliteDb } from '../../src/sqlite/sqlite-db.js';
import { WorkerAppender } from '../../src/server/log/log-appender.js';
import type { LogError } from '../../src/server/log/log-backend.js';

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

const turn = (): Promise<void> => new Promise((r) => setImmediate(r));

test('sqlite log: an append sent while a commit is in flight is committed by the worker while this thread is busy', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'caravan-log-'));
  const path = join(dir, 'raft.db');
  const log = SqliteLogBackend.open(dir);
  const locker = SqliteDb.open(path, { busyTimeoutMs: 10_000 });
  const reader = SqliteDb.open(path);
  try {
    assert.deepEqual(await log.append([{ type: 'T', payload: 'first' }]), [1]);
    // Another connection holds the write lock: the commit of `a` waits for it on the worker.
    locker.exec('BEGIN IMMEDIATE');
    const a = log.append([{ type: 'T', payload: 'a' }]);
    await turn();
    const b = log.append([{ type: 'T', payload: 'b' }]);
    await turn();
    locker.exec('COMMIT');
    // This thread now reads no answer from the worker until `b` is on disk (or 10 s pass):
    // before, `b` was sent only once the answer for `a` had been read here.
    const deadline = Date.now() + 10_000;
    let committed = false;
    while (!committed && Date.now() < deadline) {
      committed = reader.prepare("SELECT COUNT(*) AS n FROM log WHERE payload = 'b'").get<{ n: number }>()?.n === 1;
    }
    assert.ok(committed, 'b was committed while the server thread was busy');
    assert.deepEqual(await a, [2]);
    assert.deepEqual(await b, [3]);
  } finally {
    reader.close();
    locker.close();
    await log.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('sqlite log: an append sent behind one that failed fails too, and the log goes on from where it ends, without a gap', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'caravan-log-'));
  const path = join(dir, 'raft.db');
  const log = SqliteLogBackend.open(dir);
  const locker = SqliteDb.open(path, { busyTimeoutMs: 10_000 });
  try {
    assert.deepEqual(await log.append([{ type: 'T', payload: 'first' }]), [1]);
    // Index 2 is taken behind the log's back: the commit of `a` (index 2) fails, and `b`, sent
    // while `a` waited for the lock, must not be written at index 3.
    locker.exec('BEGIN IMMEDIATE');
    locker.exec("INSERT INTO log (idx, type, payload) VALUES (2, 'T', 'intruder')");
    const a = log.append([{ type: 'T', payload: 'a' }]);
    await turn();
    const b = log.append([{ type: 'T', payload: 'b' }]);
    await turn();
    locker.exec('COMMIT');
    await assert.rejects(a, /log append failed/);
    await assert.rejects(b, /log append failed/);
    locker.exec('DELETE FROM log WHERE idx = 2');
    assert.deepEqual(await log.append([{ type: 'T', payload: 'c' }]), [2]);
    assert.deepEqual((await log.read(1)).map((e) => `${e.index}:${e.payload}`), ['1:first', '2:c']);
    assert.equal(await log.lastIndex(), 2);
  } finally {
    locker.close();
    await log.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test("sqlite log: a subscriber whose onEntries throws is ended with LOG_IO; the write succeeds, other subscribers get it, close() does not throw", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'caravan-log-'));
  const unhandled: unknown[] = [];
  const onUnhandled = (err: unknown): void => void unhandled.push(err);
  process.on('unhandledRejection', onUnhandled);
  const log = SqliteLogBackend.open(dir);
  try {
    assert.deepEqual(await log.append([{ type: 'T', payload: 'backlog' }]), [1]);
    const seen: string[] = [];
    const errors: LogError[] = [];
    const healthy: string[] = [];
    // One throws on the backlog (delivered on subscribe), one on a later write, one never.
    log.subscribe(1, { onEntries: () => { throw new Error('apply failed on the backlog'); }, onError: (e) => void errors.push(e) });
    log.subscribe(1, {
      onEntries: (es) => {
        seen.push(...es.map((e) => e.payload));
        if (es.some((e) => e.payload === 'boom')) throw new Error('apply failed');
      },
      onError: (e) => void errors.push(e),
    });
    log.subscribe(1, { onEntries: (es) => void healthy.push(...es.map((e) => e.payload)), onError: (e) => assert.fail(`the healthy subscriber was ended: ${e.message}`) });
    // One whose onError throws as well: a process warning, nothing else.
    const warned = new Promise<Error>((resolve) => process.once('warning', resolve));
    log.subscribe(1, {
      onEntries: () => {
        throw new Error('apply failed twice');
      },
      onError: () => {
        throw new Error('and so did onError');
      },
    });
    await turn();
    assert.match((await warned).message, /onError threw: and so did onError \(after: log subscriber failed on entries 1–1: apply failed twice\)/);
    assert.deepEqual(await log.append([{ type: 'T', payload: 'boom' }]), [2], "the write is durable: its caller gets success");
    assert.deepEqual(await log.append([{ type: 'T', payload: 'after' }]), [3]);
    assert.deepEqual(seen, ['backlog', 'boom'], 'nothing is delivered after the failure');
    assert.deepEqual(healthy, ['backlog', 'boom', 'after']);
    assert.deepEqual(errors.map((e) => e.code), ['LOG_IO', 'LOG_IO']);
    assert.match(errors[0]!.message, /subscriber failed on entries 1–1: apply failed on the backlog/);
    assert.match(errors[1]!.message, /subscriber failed on entries 2–2: apply failed/);
    await log.close();
    await turn();
    assert.deepEqual(unhandled, []);
  } finally {
    process.off('unhandledRejection', onUnhandled);
    await log.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('sqlite log: when the append worker dies between its commit and its answer, the batch it committed is acknowledged, the one behind it fails, and the log goes on', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'caravan-log-'));
  const path = join(dir, 'raft.db');
  // The test hooks: the worker's thread exits right after its second commit, before answering;
  // `taken` counts the batches it has taken off its port.
  const taken = new Int32Array(new SharedArrayBuffer(4));
  const log = SqliteLogBackend.open(dir, (p, db) => new WorkerAppender(p, db, { exitAfterCommits: 2, taken }));
  const locker = SqliteDb.open(path, { busyTimeoutMs: 10_000 });
  try {
    assert.deepEqual(await log.append([{ type: 'T', payload: 'first' }]), [1]);
    // `a` waits on the worker for the lock; `b` is sent once the worker holds `a`, so it queues
    // behind it and the commit the worker dies after holds `a` alone.
    locker.exec('BEGIN IMMEDIATE');
    const a = log.append([{ type: 'T', payload: 'a1' }, { type: 'T', payload: 'a2' }]);
    for (const deadline = Date.now() + 30_000; Atomics.load(taken, 0) < 2; await turn()) assert.ok(Date.now() < deadline, 'the worker never took `a`');
    const b = log.append([{ type: 'T', payload: 'b' }]);
    await turn();
    locker.exec('COMMIT');
    assert.deepEqual(await a, [2, 3], 'a batch on disk is acknowledged, though its answer never came');
    await assert.rejects(b, /log append failed: log append worker exited/, 'a batch the worker never committed fails');
    assert.deepEqual((await log.read(1)).map((e) => `${e.index}:${e.payload}`), ['1:first', '2:a1', '3:a2']);
    // A new worker takes the next append, at the index `b` did not get.
    assert.deepEqual(await log.append([{ type: 'T', payload: 'c' }]), [4]);
    assert.deepEqual((await log.read(1)).map((e) => `${e.index}:${e.payload}`), ['1:first', '2:a1', '3:a2', '4:c']);
    assert.equal(await log.lastIndex(), 4);
  } finally {
    locker.close();
    await log.close();
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
