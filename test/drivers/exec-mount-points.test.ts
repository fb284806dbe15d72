/** Mount points of an exec task's host volumes (symlinks: test/security/host-volume-escape.test.ts). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { lstatSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { prepareMountPoints } from '../../src/drivers/exec/mount-points.js';
import type { TaskMount } from '../../src/drivers/driver.js';

function setup(): { root: string; taskDir: string; allocDir: string; vol: string; outside: string; cleanup: () => void } {
  const root = mkdtempSync(join(tmpdir(), 'caravan-mp-'));
  const taskDir = join(root, 'alloc-1', 't');
  const allocDir = join(root, 'alloc-1', 'alloc');
  const vol = join(root, 'vol');
  const outside = join(root, 'outside');
  for (const d of [taskDir, allocDir, vol, outside]) mkdirSync(d, { recursive: true });
  return { root, taskDir, allocDir, vol, outside, cleanup: () => rmSync(root, { recursive: true, force: true }) };
}

const m = (hostPath: string, taskPath: string): TaskMount => ({ hostPath, taskPath, readOnly: false, propagationMode: 'private' });
const chrootEnv = { '/bin': '/bin', '/etc': '/etc', '/usr': '/usr' };

test('makes the mount point directories inside the task root and /alloc', () => {
  const s = setup();
  try {
    prepareMountPoints(s.taskDir, s.allocDir, chrootEnv, [m(s.vol, '/var/lib/db'), m(s.vol, '/alloc/shared/db')]);
    assert.ok(lstatSync(join(s.taskDir, 'var/lib/db')).isDirectory());
    assert.ok(lstatSync(join(s.allocDir, 'shared/db')).isDirectory());
    prepareMountPoints(s.taskDir, s.allocDir, chrootEnv, [m(s.vol, '/var/lib/db')]);
  } finally {
    s.cleanup();
  }
});

test('a file volume gets an empty file as its mount point', () => {
  const s = setup();
  try {
    const file = join(s.root, 'token');
    writeFileSync(file, 'x');
    prepareMountPoints(s.taskDir, s.allocDir, chrootEnv, [m(file, '/run/token')]);
    assert.ok(lstatSync(join(s.taskDir, 'run/token')).isFile());
  } finally {
    s.cleanup();
  }
});

test('refused under a chroot_env directory, at the root, at /alloc itself, and bidirectional', () => {
  const s = setup();
  try {
    assert.throws(() => prepareMountPoints(s.taskDir, s.allocDir, chrootEnv, [m(s.vol, '/etc/cron.d')]), /under \/etc/);
    assert.throws(() => prepareMountPoints(s.taskDir, s.allocDir, chrootEnv, [m(s.vol, '/alloc')]), /allocation directory itself/);
    assert.throws(() => prepareMountPoints(s.taskDir, s.allocDir, chrootEnv, [{ ...m(s.vol, '/d'), propagationMode: 'bidirectional' }]), /bidirectional/);
  } finally {
    s.cleanup();
  }
});
