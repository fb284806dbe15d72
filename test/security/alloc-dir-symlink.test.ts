/**
 * A task that replaces its own `secrets/` (or `local/`) with a symlink before a restart must not
 * make the agent, as root, change or create anything where the link points when the task
 * directory is built again.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, rmSync, statSync, symlinkSync, readdirSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AllocDir } from '../../src/client/allocdir/alloc-dir.js';
import { ConfinementError } from '../../src/fs/confined-fs.js';

test('a planted secrets -> elsewhere link is refused and the target keeps its mode', async () => {
  const tmp = mkdtempSync(join(tmpdir(), 'cv-allocdir-'));
  try {
    const victim = join(tmp, 'victim');
    mkdirSync(victim);
    chmodSync(victim, 0o755);
    const dir = new AllocDir(join(tmp, 'data'), 'a1');
    await dir.build();
    await dir.buildTaskDir('web');
    rmSync(join(dir.root, 'web', 'secrets'), { recursive: true });
    symlinkSync(victim, join(dir.root, 'web', 'secrets'));
    await assert.rejects(dir.buildTaskDir('web'), (e: unknown) => e instanceof ConfinementError);
    assert.equal(statSync(victim).mode & 0o777, 0o755, 'the link target was not chmodded');

    rmSync(join(dir.root, 'web', 'secrets'));
    mkdirSync(join(dir.root, 'web', 'secrets'));
    rmSync(join(dir.root, 'web', 'tmp'), { recursive: true });
    symlinkSync(victim, join(dir.root, 'web', 'tmp'));
    await assert.rejects(dir.buildTaskDir('web'), (e: unknown) => e instanceof ConfinementError);
    assert.deepEqual(readdirSync(victim), [], 'nothing was created in the link target');
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
});

test('a task directory is built, and built again, with a private secrets/', async () => {
  const tmp = mkdtempSync(join(tmpdir(), 'cv-allocdir-'));
  try {
    const dir = new AllocDir(join(tmp, 'data'), 'a1');
    await dir.build();
    const dirs = await dir.buildTaskDir('web');
    chmodSync(dirs.secretsDir, 0o777);
    await dir.buildTaskDir('web');
    assert.equal(statSync(dirs.secretsDir).mode & 0o777, 0o700);
    for (const d of [dirs.localDir, dirs.tmpDir]) assert.ok(statSync(d).isDirectory());
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
});
