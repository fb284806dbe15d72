/**
 * What every list endpoint accepts beyond the common query options: `filter` (Nomad's go-bexpr
 * expression language), `per_page` and `next_token` (pagination; the next page's token goes
 * out in X-Nomad-NextToken) and `reverse`. answerRead applies them to any list it answers, so
 * no route handles them itself. Malformed values are a 400 naming the problem.
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

/**
 * Filters, orders and pages a list. Paged lists are ordered by key (reversed with `reverse`),
 * so a token stays valid when items before it go away: a page starts at the first item whose
 * key is at or past the token.
 */
export function applyListOptions<T>(list: readonly T[], opts: ListOptions): ListPage<T> {
  let items = opts.filter ? list.filter((item) => evaluateFilter(opts.filter!, filterDatum(item))) : [...list];
  const paging = opts.perPage > 0 || opts.nextToken !== '';
  if (paging) {
    const keyed = items.map((item) => ({ item, key: itemKey(item) }));
    keyed.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    if (opts.reverse) keyed.reverse();
    let start = 0;
    if (opts.nextToken !== '') {
      const tok = opts.nextToken;
      start = keyed.findIndex((k) => (opts.reverse ? k.key <= tok : k.key >= tok));
      if (start < 0) start = keyed.length;
    }
    const end = opts.perPage > 0 ? Math.min(keyed.length, start + opts.perPage) : keyed.length;
    return { items: keyed.slice(start, end).map((k) => k.item), nextToken: end < keyed.length ? keyed[end]!.key : '' };
  }
  if (opts.reverse) items = items.reverse();
  return { items, nextToken: '' };
}
