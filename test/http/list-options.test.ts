import { test } from 'node:test';
import assert from 'node:assert/strict';
import { applyListOptions, parseListOptions, stubOf } from '../../src/http/list-options.js';
import { CaravanError } from '../../src/structs/caravan-error.js';

const items = ['c', 'a', 'e', 'b', 'd'].map((ID, i) => ({ ID, N: i }));

test('list options: per_page pages by key and next_token resumes at or past the token', () => {
  const p1 = applyListOptions(items, parseListOptions({ per_page: '2' }));
  assert.deepEqual(p1.items.map((i) => i.ID), ['a', 'b']);
  assert.equal(p1.nextToken, 'c');
  const p2 = applyListOptions(items, parseListOptions({ per_page: '2', next_token: p1.nextToken }));
  assert.deepEqual(p2.items.map((i) => i.ID), ['c', 'd']);
  const p3 = applyListOptions(items, parseListOptions({ per_page: '2', next_token: p2.nextToken }));
  assert.deepEqual(p3.items.map((i) => i.ID), ['e']);
  assert.equal(p3.nextToken, '');
  // The token's item went away: the page starts at the next key.
  const gone = applyListOptions(items.filter((i) => i.ID !== 'c'), parseListOptions({ per_page: '2', next_token: 'c' }));
  assert.deepEqual(gone.items.map((i) => i.ID), ['d', 'e']);
});

test('list options: reverse, with and without paging', () => {
  assert.deepEqual(applyListOptions(items, parseListOptions({ reverse: 'true' })).items.map((i) => i.ID), ['d', 'b', 'e', 'a', 'c']);
  const p1 = applyListOptions(items, parseListOptions({ reverse: 'true', per_page: '3' }));
  assert.deepEqual(p1.items.map((i) => i.ID), ['e', 'd', 'c']);
  const p2 = applyListOptions(items, parseListOptions({ reverse: 'true', per_page: '3', next_token: p1.nextToken }));
  assert.deepEqual(p2.items.map((i) => i.ID), ['b', 'a']);
});

test('list options: the filter applies before paging, and to the object a stub summarises', () => {
  const page = applyListOptions(items, parseListOptions({ filter: 'ID != "a" and ID != "b"', per_page: '2' }));
  assert.deepEqual(page.items.map((i) => i.ID), ['c', 'd']);
  assert.equal(page.nextToken, 'e');
  const stubs = [stubOf({ ID: 'x' }, { ID: 'x', Meta: { team: 'infra' } }), stubOf({ ID: 'y' }, { ID: 'y', Meta: { team: 'web' } })];
  const got = applyListOptions(stubs, parseListOptions({ filter: 'Meta.team == "web"' }));
  assert.deepEqual(got.items, [{ ID: 'y' }]);
  assert.equal(JSON.stringify(got.items), '[{"ID":"y"}]');
});

test('list options: a malformed filter or page size is a 400 naming it', () => {
  assert.throws(() => parseListOptions({ filter: 'Status ==' }), (err: unknown) => err instanceof CaravanError && err.status === 400 && /failed to read filter expression: expected a value/.test(err.message));
  assert.throws(() => parseListOptions({ per_page: '-1' }), (err: unknown) => err instanceof CaravanError && err.status === 400 && /per_page/.test(err.message));
  assert.throws(() => parseListOptions({ reverse: 'maybe' }), (err: unknown) => err instanceof CaravanError && err.status === 400 && /reverse/.test(err.message));
});
