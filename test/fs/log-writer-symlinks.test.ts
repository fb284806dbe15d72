// Issue 17 item 12: the task owns its log directory and the agent (root) writes there. A link
// the task plants must never make the agent write into a host file.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { linkSync, lstatSync, mkdirSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { RotatingFileWriter } from '../../src/drivers/logs/rotating-file-writer.js';
import { tempRoot } from '../drivers/task-config.js';

function setup(): { root: string; logDir: string; host: string; hostFile: string } {
  const root = tempRoot('caravan-logesc-');
  const logDir = join(root, 'alloc', 'logs');
  mkdirSync(logDir, { recursive: true });
  const host = join(root, 'host');
  mkdirSync(host);
  const hostFile = join(host, 'shadow');
  writeFileSync(hostFile, 'host secret\n');
  return { root, logDir, host, hostFile };
}

test('rotating into a planted symlink replaces the link and leaves its target untouched', () => {
  const { root, logDir, hostFile } = setup();
  try {
    const w = new RotatingFileWriter({ dir: logDir, prefix: 't.stdout', maxFiles: 5, maxFileSizeBytes: 8 });
    w.write('12345678');
    symlinkSync(hostFile, join(logDir, 't.stdout.1'));
    w.write('PAST-THE-LIMIT');
    w.close();
    assert.equal(readFileSync(hostFile, 'utf8'), 'host secret\n');
    assert.ok(lstatSync(join(logDir, 't.stdout.1')).isFile(), 't.stdout.1 is now the agent\'s regular file');
    assert.equal(readFileSync(join(logDir, 't.stdout.1'), 'utf8') + readFileSync(join(logDir, 't.stdout.2'), 'utf8'), 'PAST-THE-LIMIT');
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('reopening a set whose current file became a symlink or a hard link does not append to the host file', () => {
  const { root, logDir, hostFile } = setup();
  try {
    symlinkSync(hostFile, join(logDir, 't.stdout.0'));
    const w1 = new RotatingFileWriter({ dir: logDir, prefix: 't.stdout', maxFiles: 5, maxFileSizeBytes: 1024 });
    w1.write('via symlink?');
    w1.close();
    assert.equal(readFileSync(hostFile, 'utf8'), 'host secret\n');

    rmSync(join(logDir, 't.stdout.0'));
    linkSync(hostFile, join(logDir, 't.stderr.0'));
    const w2 = new RotatingFileWriter({ dir: logDir, prefix: 't.stderr', maxFiles: 5, maxFileSizeBytes: 1024 });
    w2.write('via hard link?');
    w2.close();
    assert.equal(readFileSync(hostFile, 'utf8'), 'host secret\n');
    assert.equal(readFileSync(join(logDir, 't.stderr.0'), 'utf8'), 'via hard link?');
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('a FIFO planted as the next log file neither blocks the writer nor receives output', () => {
  const { root, logDir } = setup();
  try {
    const w = new RotatingFileWriter({ dir: logDir, prefix: 't.stdout', maxFiles: 5, maxFileSizeBytes: 4 });
    w.write('abcd');
    execFileSync('mkfifo', [join(logDir, 't.stdout.1')]);
    w.write('efgh');
    w.close();
    assert.ok(lstatSync(join(logDir, 't.stdout.1')).isFile());
    assert.equal(readFileSync(join(logDir, 't.stdout.1'), 'utf8'), 'efgh');
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('a log directory swapped for a symlink to a host directory is refused, nothing is created there', () => {
  const { root, logDir, host } = setup();
  try {
    rmSync(logDir, { recursive: true });
    symlinkSync(host, logDir);
    assert.throws(() => new RotatingFileWriter({ dir: logDir, prefix: 't.stdout', maxFiles: 5, maxFileSizeBytes: 1024 }), /symlink/);
    assert.deepEqual(readdirSync(host), ['shadow']);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('old files past max_files are removed as links, never their targets', () => {
  const { root, logDir, hostFile } = setup();
  try {
    const w = new RotatingFileWriter({ dir: logDir, prefix: 't.stdout', maxFiles: 1, maxFileSizeBytes: 2 });
    w.write('aa');
    rmSync(join(logDir, 't.stdout.0'));
    symlinkSync(hostFile, join(logDir, 't.stdout.0'));
    w.write('bbcc');
    w.close();
    assert.equal(readFileSync(hostFile, 'utf8'), 'host secret\n');
    assert.deepEqual(readdirSync(logDir).sort(), ['t.stdout.2']);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
