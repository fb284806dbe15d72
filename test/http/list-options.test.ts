import { test } from 'node:test';
import assert from 'node:assert/strict';
import { applyListOptions, listShapeOf, PageOrder, pagedList, parseListOptions, stubOf } from '../../src/http/list-options.js';
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

test('list options: a paged list of stored objects is filtered on them and answers views of the page only', () => {
  const stored = [3, 1, 2, 5, 4].map((n) => ({ ID: `id-${n}`, CreateIndex: 10 - n, Secret: 's', Meta: { n: String(n) } }));
  let views = 0;
  const list = pagedList(stored, PageOrder.CreateIndexId, (o) => {
    views++;
    return { ID: o.ID, CreateIndex: o.CreateIndex };
  });
  const shape = listShapeOf(list);
  const page = applyListOptions(list, parseListOptions({ per_page: '2', filter: 'Meta.n != "3"' }), shape);
  assert.deepEqual(page.items, [{ ID: 'id-5', CreateIndex: 5 }, { ID: 'id-4', CreateIndex: 6 }]);
  assert.equal(page.nextToken, '8.id-2');
  assert.equal(views, 2, 'views are made for the page only');
  const next = applyListOptions(list, parseListOptions({ per_page: '2', next_token: page.nextToken }), shape);
  assert.deepEqual(next.items, [{ ID: 'id-2', CreateIndex: 8 }, { ID: 'id-1', CreateIndex: 9 }]);
  // Numeric, not textual, order of create indexes.
  const wide = pagedList([{ ID: 'b', CreateIndex: 10 }, { ID: 'a', CreateIndex: 9 }], PageOrder.CreateIndexId);
  assert.deepEqual(applyListOptions(wide, parseListOptions({ per_page: '1' }), listShapeOf(wide)).nextToken, '10.b');
  const ns = pagedList([{ Namespace: 'prod', ID: 'a' }, { Namespace: 'default', ID: 'z' }], PageOrder.NamespaceId);
  const p1 = applyListOptions(ns, parseListOptions({ per_page: '1' }), listShapeOf(ns));
  assert.deepEqual(p1.items, [{ Namespace: 'default', ID: 'z' }]);
  assert.equal(p1.nextToken, 'prod.a');
});
