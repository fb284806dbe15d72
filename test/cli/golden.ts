/**
 * Golden files of CLI output: test/fixtures/cli-golden/<name>.txt holds what the command prints
 * for a fixed state, written from Nomad's documented output for the same state. A mismatch shows
 * both whole; CARAVAN_UPDATE_GOLDEN=1 rewrites the file (review the diff before committing it).
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { repoPath } from '../jobspec/repo-root.js';

/** Asserts `actual` equals the golden file `name`. */
export function assertGolden(name: string, actual: string): void {
  const file = repoPath('test/fixtures/cli-golden', `${name}.txt`);
  if (process.env.CARAVAN_UPDATE_GOLDEN === '1' || !existsSync(file)) {
    if (process.env.CARAVAN_UPDATE_GOLDEN !== '1') assert.fail(`no golden file ${file}; run with CARAVAN_UPDATE_GOLDEN=1 to write it`);
    writeFileSync(file, actual);
    return;
  }
  assert.equal(actual, readFileSync(file, 'utf8'), `output differs from ${file}`);
}
