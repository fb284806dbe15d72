import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CaravanError, hasErrorCode } from '../../src/structs/caravan-error.js';
import { ErrorCatalogue, isErrorCode, type ErrorCode } from '../../src/structs/error-catalogue.js';

// The compiled sources of this very build (comments and string literals survive tsc), so the
// test checks the code that runs, even while src/ is being edited.
const DIST = fileURLToPath(new URL('../../', import.meta.url));
const CATALOGUE = 'src/structs/error-catalogue.js';

function sources(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...sources(p));
    else if (name.endsWith('.js')) out.push(relative(DIST, p));
  }
  return out;
}

const files = sources(join(DIST, 'src')).map((path) => ({ path, text: readFileSync(join(DIST, path), 'utf8') }));
const codes = Object.keys(ErrorCatalogue) as ErrorCode[];

test('every code of the catalogue is documented: a comment, an error status and a message', () => {
  const text = files.find((f) => f.path === CATALOGUE)!.text;
  for (const code of codes) {
    const spec = ErrorCatalogue[code];
    assert.ok(spec.status >= 400 && spec.status < 600, `${code}: status ${spec.status} is not an error status`);
    assert.ok(spec.message.length > 0, `${code}: empty message`);
    assert.match(text, new RegExp(`/\\*\\*[^]*?\\*/\\n\\s+${code}:`), `${code}: no doc comment in ${CATALOGUE}`);
  }
});

test('every code of the catalogue is raised somewhere in src/', () => {
  const others = files.filter((f) => f.path !== CATALOGUE);
  for (const code of codes) {
    assert.ok(
      others.some((f) => f.text.includes(`'${code}'`) || f.text.includes(`ErrorCatalogue.${code}`)),
      `${code} is in the catalogue but nothing in src/ raises it: remove it or throw it`,
    );
  }
});

test('every code an error declares is in the catalogue', () => {
  // `new XError('CODE'`, `super('CODE'` and `Name: 'CODE'` rows of the code tables.
  const patterns = [/new \w*Error(?:<[^>]*>)?\('([A-Z][A-Z0-9_]+)'/g, /super\('([A-Z][A-Z0-9_]+)'/g, /^\s+\w+: '([A-Z][A-Z0-9]+_[A-Z0-9_]+)',$/gm];
  for (const f of files) {
    if (f.path === CATALOGUE || !/(server|http|client|structs|jobspec|agent)\//.test(f.path)) continue;
    for (const re of patterns) {
      for (const m of f.text.matchAll(re)) assert.ok(isErrorCode(m[1]), `${f.path}: code ${m[1]} is not in the error catalogue`);
    }
  }
});

test('server, HTTP, client, structs, jobspec and agent errors are all CaravanErrors', () => {
  for (const f of files) {
    if (!/^src\/(server|http|client|structs|jobspec|agent)\//.test(f.path) || f.path === 'src/structs/caravan-error.js') continue;
    assert.doesNotMatch(f.text, /class \w+ extends Error\b/, `${f.path} declares an error outside the catalogue's base class`);
  }
});

test('no HTTP status is chosen outside the catalogue', () => {
  for (const f of files) {
    if (!/^src\/(server|http|client|agent)\//.test(f.path)) continue;
    assert.doesNotMatch(f.text, /\.code\([45]\d\d\)|\.status\([45]\d\d\)|statusCode = [45]\d\d|Error\([^)]*, [45]\d\d[,)]/, `${f.path} chooses an HTTP status`);
  }
});

test('a CaravanError takes its status, recoverability and message from its code', () => {
  const e = new CaravanError('JOB_NOT_FOUND', { job: 'web' }, { cause: new Error('x') });
  assert.equal(e.status, 404);
  assert.equal(e.recoverable, false);
  assert.equal(e.message, 'job "web" not found');
  assert.ok(hasErrorCode(e, 'JOB_NOT_FOUND'));
  assert.ok(!hasErrorCode(e, 'NODE_NOT_FOUND'));
  assert.equal(new CaravanError('SERVER_CLOSED', {}).recoverable, true);
  assert.equal(new CaravanError('NODE_SECRET_MISMATCH', {}).message, 'Permission denied');
});
