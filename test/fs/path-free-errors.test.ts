// Issue 26 item 8, the family: errors of the confinement layer and of the allocation file routes
// name only the path the caller gave, never the absolute path on disk (the agent's layout), even
// when the failure is a system error whose own message carries that path.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfinementError, confinementRefusal, openDirNoFollowSync, openNoFollowSync, realRootSync, resolveInside } from '../../src/fs/confined-fs.js';
import { allocFsFailure } from '../../src/http/fs/alloc-path.js';
import { CaravanError } from '../../src/structs/caravan-error.js';

const scratch = mkdtempSync(join(tmpdir(), 'caravan-pathfree-'));
const missingRoot = join(scratch, 'client', 'alloc', 'gone');
test.after(() => rmSync(scratch, { recursive: true, force: true }));

/** A real system error about `path`, as Node raises it (its message names the path). */
async function systemError(path: string): Promise<NodeJS.ErrnoException> {
  try {
    await open(path, 'r');
  } catch (err) {
    return err as NodeJS.ErrnoException;
  }
  throw new Error(`${path} exists`);
}

test('a missing confining directory is named as "the allowed directory", not by its path', async () => {
  const errs: unknown[] = [];
  for (const f of [
    () => openDirNoFollowSync(missingRoot, 'alloc/logs'),
    () => openNoFollowSync(missingRoot, 'local/x', 0),
    () => realRootSync(missingRoot),
  ]) {
    try {
      f();
    } catch (err) {
      errs.push(err);
    }
  }
  await resolveInside(missingRoot, 'local/x').catch((err: unknown) => errs.push(err));
  assert.equal(errs.length, 4);
  for (const err of errs) {
    assert.ok(err instanceof ConfinementError, String(err));
    assert.ok(!err.message.includes(scratch), err.message);
    assert.match(err.message, /the allowed directory not found/);
  }
});

test('a system error becomes a refusal naming what the caller gave, with the errno but not the path', async () => {
  const raw = await systemError(join(missingRoot, 'secret'));
  assert.ok(raw.message.includes(scratch), 'the premise: Node names the path');
  const refused = confinementRefusal(Object.assign(new Error(raw.message), { code: 'EACCES', errno: -13 }), 'file "local/x"');
  assert.equal(refused.message, 'file "local/x": EACCES (permission denied)');
  assert.equal(refused.status, 403);
});

test('allocFsFailure answers every failure naming only the requested path', async () => {
  const raw = await systemError(join(missingRoot, 'secret'));
  const cases: [unknown, number][] = [
    [raw, 404],
    [Object.assign(new Error(`EACCES: permission denied, scandir '${missingRoot}'`), { code: 'EACCES', errno: -13 }), 403],
    [Object.assign(new Error(`EISDIR: illegal operation on a directory, read '${missingRoot}'`), { code: 'EISDIR', errno: -21 }), 400],
    [Object.assign(new Error(`ENXIO: no such device or address, open '${missingRoot}/sock'`), { code: 'ENXIO', errno: -6 }), 403],
    [new TypeError(`cannot read properties of ${missingRoot}`), 500],
  ];
  for (const [err, status] of cases) {
    const answer = allocFsFailure(err, 't/local/x');
    assert.ok(answer instanceof CaravanError);
    assert.equal(answer.status, status, answer.message);
    assert.ok(!answer.message.includes(scratch), answer.message);
    assert.match(answer.message, /"t\/local\/x"/);
    assert.equal(answer.cause, err, 'the original stays the cause, for the agent log');
  }
  // Caravan's own errors pass unchanged.
  const own = new ConfinementError('CONFINE_PATH_ESCAPE', 'path "x" is outside the allowed directory');
  assert.equal(allocFsFailure(own, 'x'), own);
});
