/**
 * What every list endpoint accepts beyond the common query options: `filter` (Nomad's go-bexpr
 * expression language), `per_page` and `next_token` (pagination; the next page's token goes
 * out in X-Nomad-NextToken) and `reverse`. answerRead applies them to any list it answers, so
 * no route handles them itself. Malformed values are a 400 naming the problem.
 *
 * A route may mark its list (pagedList) with the order and tokens of Nomad's paginator for that
 * endpoint — jobs by namespace and ID ("default.web"), allocations, evaluations and deployments
 * by create index and ID ("1234.<uuid>", by ID alone under ?prefix=) — and with the view each
 * item is answered as: the list is then filtered, ordered and paged on the stored objects and
 * only the page's items are turned into views (a page of 50 of 50,000 allocations builds 50 stubs).
 */
import { evaluateFilter } from './filter/bexpr-eval.js';
import { parseFilter, type FilterExpr } from './filter/bexpr-parse.js';
import { badRequest } from './http-errors.js';
import { queryFlag, queryParam, type RawQuery } from './query-options.js';

/** Where a list item's filter datum hides: stubs are filtered on the object they summarise. */
const FILTER_SOURCE = Symbol('filterSource');

/**
 * Marks a list stub with the full object it summarises: `filter` then sees every field of it
 * (a job's TaskGroups, a node's Attributes), as Nomad filters the objects, not their stubs.
 * JSON.stringify ignores the symbol, so the answer is unchanged.
 */
export function stubOf<T extends object>(stub: T, source: object): T {
  Object.defineProperty(stub, FILTER_SOURCE, { value: source, enumerable: false });
  return stub;
}

function filterDatum(item: unknown): unknown {
  if (item !== null && typeof item === 'object') {
    const src = (item as { [FILTER_SOURCE]?: unknown })[FILTER_SOURCE];
    if (src !== undefined) return src;
  }
  return item;
}

/** The parsed list options of one request. */
export interface ListOptions {
  filter: FilterExpr | undefined;
  /** 0: no paging. */
  perPage: number;
  nextToken: string;
  reverse: boolean;
}

/** Parses the list options; a malformed filter or page size is a 400 naming it. */
export function parseListOptions(q: RawQuery): ListOptions {
  const rawFilter = queryParam(q, 'filter');
  let filter: FilterExpr | undefined;
  if (rawFilter !== undefined && rawFilter.trim() !== '') {
    // A malformed filter throws FilterSyntaxError: a 400 naming the problem.
    filter = parseFilter(rawFilter);
  }
  const rawPerPage = queryParam(q, 'per_page');
  let perPage = 0;
  if (rawPerPage !== undefined && rawPerPage !== '') {
    if (!/^\d+$/.test(rawPerPage)) throw badRequest(`invalid value for "per_page": ${JSON.stringify(rawPerPage)} (want a non-negative integer)`);
    perPage = Number(rawPerPage);
  }
  return { filter, perPage, nextToken: queryParam(q, 'next_token') ?? '', reverse: queryFlag(q, 'reverse') };
}

/** How a paged list is ordered, and so what its tokens are (Nomad's StructsTokenizerOptions). */
export const PageOrder = {
  /** By ID (or Name, or Path); the token is the key. */
  Id: 'id',
  /** By namespace, then ID; the token is "namespace.ID". */
  NamespaceId: 'namespace-id',
  /** By create index, then ID; the token is "CreateIndex.ID". */
  CreateIndexId: 'create-index-id',
} as const;
export type PageOrder = (typeof PageOrder)[keyof typeof PageOrder];

/** What pagedList records on a list: its page order and the view of its items. */
export interface ListShape {
  order: PageOrder;
  view?: (item: never) => unknown;
}

const LIST_SHAPE = Symbol('listShape');

/**
 * Marks a list of stored objects with its page order and the view each item is answered as
 * (see the file comment). The filter sees the stored object, as with stubOf. Answers the list
 * itself; JSON.stringify ignores the mark, so read it (listShapeOf) before copying the list.
 */
export function pagedList<T>(items: T[], order: PageOrder, view?: (item: T) => unknown): T[] {
  const shape: ListShape = { order, ...(view ? { view: view as (item: never) => unknown } : {}) };
  Object.defineProperty(items, LIST_SHAPE, { value: shape, enumerable: false });
  return items;
}

/** The shape pagedList recorded on `list`, if any. */
export function listShapeOf(list: unknown): ListShape | undefined {
  return Array.isArray(list) ? (list as { [LIST_SHAPE]?: ListShape })[LIST_SHAPE] : undefined;
}

/** The paging key of a list item: its ID, else its Name, else its Path (variables). */
function itemKey(item: unknown): string {
  if (item === null || typeof item !== 'object') return typeof item === 'string' ? item : '';
  const o = item as Record<string, unknown>;
  for (const field of ['ID', 'Name', 'Path']) {
    const v = o[field];
    if (typeof v === 'string') return v;
  }
  return '';
}

/** One page of a list, and the token of the page after it ("" on the last page). */
export interface ListPage<T> {
  items: T[];
  nextToken: string;
}

/** A sort key: a leading part (number or string) and the ID. */
type SortKey = readonly [number | string, string];

function field(item: unknown, name: string): unknown {
  return item !== null && typeof item === 'object' ? (item as Record<string, unknown>)[name] : undefined;
}

function sortKeyOf(item: unknown, order: PageOrder): SortKey {
  switch (order) {
    case PageOrder.Id:
      return [itemKey(item), ''];
    case PageOrder.NamespaceId:
      return [String(field(item, 'Namespace') ?? ''), itemKey(item)];
    case PageOrder.CreateIndexId:
      return [Number(field(item, 'CreateIndex') ?? 0), itemKey(item)];
    default: {
      const never: never = order;
      throw new Error(`unknown page order ${String(never)}`);
    }
  }
}

function tokenOf(key: SortKey, order: PageOrder): string {
  return order === PageOrder.Id ? String(key[0]) : `${key[0]}.${key[1]}`;
}

/** The sort key a next_token names; a token that is not of the list's form is a 400 naming it. */
function parseToken(token: string, order: PageOrder): SortKey {
  if (order === PageOrder.Id) return [token, ''];
  const dot = token.indexOf('.');
  const head = dot < 0 ? '' : token.slice(0, dot);
  if (order === PageOrder.NamespaceId) {
    if (dot < 0) throw badRequest(`invalid value for "next_token": ${JSON.stringify(token)} (want namespace.ID)`);
    return [head, token.slice(dot + 1)];
  }
  if (dot < 0 || !/^\d+$/.test(head)) throw badRequest(`invalid value for "next_token": ${JSON.stringify(token)} (want CreateIndex.ID)`);
  return [Number(head), token.slice(dot + 1)];
}

function compareKeys(a: SortKey, b: SortKey): number {
  if (a[0] !== b[0]) return a[0] < b[0] ? -1 : 1;
  return a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0;
}

/**
 * Filters, orders and pages a list. Paged lists are ordered by `shape.order` (by key when
 * unmarked; reversed with `reverse`), so a token stays valid when items before it go away: a
 * page starts at the first item whose key is at or past the token. With `shape.view`, the items
 * answered are the views of the page's items.
 */
export function applyListOptions<T>(list: readonly T[], opts: ListOptions, shape?: ListShape): ListPage<T> {
  const view = shape?.view as ((item: T) => T) | undefined;
  const finish = (items: T[]): T[] => (view ? items.map(view) : items);
  let items = opts.filter ? list.filter((item) => evaluateFilter(opts.filter!, filterDatum(item))) : [...list];
  const paging = opts.perPage > 0 || opts.nextToken !== '';
  if (paging) {
    const order = shape?.order ?? PageOrder.Id;
    const keyed = items.map((item) => ({ item, key: sortKeyOf(item, order) }));
    keyed.sort((a, b) => compareKeys(a.key, b.key));
    if (opts.reverse) keyed.reverse();
    let start = 0;
    if (opts.nextToken !== '') {
      const tok = parseToken(opts.nextToken, order);
      start = keyed.findIndex((k) => (opts.reverse ? compareKeys(k.key, tok) <= 0 : compareKeys(k.key, tok) >= 0));
      if (start < 0) start = keyed.length;
    }
    const end = opts.perPage > 0 ? Math.min(keyed.length, start + opts.perPage) : keyed.length;
    return { items: finish(keyed.slice(start, end).map((k) => k.item)), nextToken: end < keyed.length ? tokenOf(keyed[end]!.key, order) : '' };
  }
  if (opts.reverse) items = items.reverse();
  return { items: finish(items), nextToken: '' };
}
