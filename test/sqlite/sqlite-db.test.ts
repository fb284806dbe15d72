import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteDb } from '../../src/sqlite/sqlite-db.js';

test('sqlite: a durable file database runs WAL with synchronous=FULL', () => {
  const dir = mkdtempSync(join(tmpdir(), 'caravan-sqlite-'));
  try {
    const db = SqliteDb.open(join(dir, 'sub', 'x.db'));
    assert.equal(db.pragmaValue('journal_mode'), 'wal');
    assert.equal(db.pragmaValue('synchronous'), 2);
    db.close();
    assert.equal(db.open, false);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('sqlite: rows carry only their columns (no driver _metadata), from get and all', () => {
  const db = SqliteDb.open(':memory:');
  db.exec('CREATE TABLE t (a INTEGER PRIMARY KEY, b TEXT)');
  db.prepare('INSERT INTO t (a, b) VALUES (?, ?)').run(1, 'x');
  const one = db.prepare('SELECT a, b FROM t WHERE a = ?').get(1);
  assert.deepEqual(one, { a: 1, b: 'x' });
  assert.deepEqual(Object.keys(one ?? {}), ['a', 'b']);
  assert.equal(JSON.stringify(one), '{"a":1,"b":"x"}');
  assert.deepEqual(db.prepare('SELECT a, b FROM t').all(), [{ a: 1, b: 'x' }]);
  assert.equal(db.prepare('SELECT a FROM t WHERE a = ?').get(99), undefined);
  db.close();
});

test('sqlite: a lone Buffer parameter binds as a BLOB, and BLOBs read back as Buffer from get and all', () => {
  const db = SqliteDb.open(':memory:');
  db.exec('CREATE TABLE t (b BLOB)');
  // libsql takes a lone object argument for named parameters and aborts the process on a Buffer.
  db.prepare('INSERT INTO t (b) VALUES (?)').run(Buffer.from('hi'));
  const got = db.prepare('SELECT b FROM t').get<{ b: Buffer }>();
  assert.ok(Buffer.isBuffer(got?.b));
  assert.equal(got?.b.toString(), 'hi');
  const all = db.prepare('SELECT b FROM t').all<{ b: Buffer }>();
  assert.ok(Buffer.isBuffer(all[0]?.b));
  assert.equal(all[0]?.b.toString(), 'hi');
  db.close();
});

test('sqlite: a transaction that throws is rolled back', () => {
  const db = SqliteDb.open(':memory:');
  db.exec('CREATE TABLE t (a INTEGER)');
  assert.throws(
    () =>
      db.transaction(() => {
        db.prepare('INSERT INTO t (a) VALUES (?)').run(1);
        throw new Error('boom');
      }),
    /boom/,
  );
  assert.deepEqual(db.prepare('SELECT COUNT(*) AS n FROM t').get(), { n: 0 });
  assert.equal(db.transaction(() => 7), 7);
  db.close();
});

test('sqlite: a transaction that fills the database fails with "database or disk is full", not the rollback SQLite already did', () => {
  const dir = mkdtempSync(join(tmpdir(), 'caravan-sqlite-'));
  try {
    const db = SqliteDb.open(join(dir, 'full.db'));
    db.exec('CREATE TABLE t (v BLOB)');
    // A database that may not grow past 20 pages: full after a few rows.
    db.exec('PRAGMA max_page_count = 20');
    const insert = db.prepare('INSERT INTO t (v) VALUES (?)');
    assert.throws(
      () => db.transaction(() => {
        for (let i = 0; i < 100; i++) insert.run(Buffer.alloc(4000, i));
      }),
      (err: Error) => /database or disk is full/.test(err.message) && !/rollback/.test(err.message),
    );
    // Nothing of the failed transaction stayed, and the connection takes the next one.
    assert.deepEqual(db.prepare('SELECT COUNT(*) AS n FROM t').get(), { n: 0 });
    db.transaction(() => insert.run(Buffer.alloc(10)));
    assert.deepEqual(db.prepare('SELECT COUNT(*) AS n FROM t').get(), { n: 1 });
    db.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('sqlite: a failed statement inside a transaction is rolled back and its own error is thrown', () => {
  const db = SqliteDb.open(':memory:');
  db.exec('CREATE TABLE t (a INTEGER PRIMARY KEY)');
  assert.throws(
    () => db.transaction(() => {
      db.prepare('INSERT INTO t (a) VALUES (1)').run();
      db.prepare('INSERT INTO t (a) VALUES (1)').run();
    }),
    /UNIQUE constraint failed/,
  );
  assert.deepEqual(db.prepare('SELECT COUNT(*) AS n FROM t').get(), { n: 0 });
  assert.throws(() => db.transaction(() => {
    throw new Error('from the caller');
  }), /from the caller/);
  db.close();
});
