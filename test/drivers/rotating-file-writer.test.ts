import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { RotatingFileWriter, listLogIndexes } from '../../src/drivers/logs/rotating-file-writer.js';
import { tempRoot } from './task-config.js';

const read = (dir: string, n: number) => readFileSync(join(dir, `t.stdout.${n}`), 'utf8');

test('rotating writer: splits writes at the size limit and keeps only max_files', () => {
  const dir = tempRoot();
  try {
    const w = new RotatingFileWriter({ dir, prefix: 't.stdout', maxFiles: 2, maxFileSizeBytes: 4 });
    w.write('abcdefghij'); // 4 + 4 + 2 → files 0,1,2; 0 deleted
    w.close();
    assert.deepEqual(listLogIndexes(dir, 't.stdout'), [1, 2]);
    assert.equal(read(dir, 1), 'efgh');
    assert.equal(read(dir, 2), 'ij');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('rotating writer: reopening continues in the highest-numbered file without overwriting', () => {
  const dir = tempRoot();
  try {
    writeFileSync(join(dir, 't.stdout.3'), 'old\n');
    writeFileSync(join(dir, 't.stdout.1'), 'older\n');
    writeFileSync(join(dir, 't.stdout.x'), 'not a log index');
    const w = new RotatingFileWriter({ dir, prefix: 't.stdout', maxFiles: 5, maxFileSizeBytes: 1024 });
    assert.equal(w.currentIndex, 3);
    w.write('new\n');
    w.close();
    assert.equal(read(dir, 3), 'old\nnew\n');
    assert.equal(read(dir, 1), 'older\n');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('rotating writer: bad options name the field', () => {
  assert.throws(() => new RotatingFileWriter({ dir: '/tmp', prefix: 'x', maxFiles: 0, maxFileSizeBytes: 1 }), /max_files/);
  assert.throws(() => new RotatingFileWriter({ dir: '/tmp', prefix: 'x', maxFiles: 1, maxFileSizeBytes: 0 }), /max_file_size/);
});
