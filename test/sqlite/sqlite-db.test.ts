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
