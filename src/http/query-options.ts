/**
 * Query parameters shared by every read: blocking (`index`, `wait`), `prefix`, `namespace`,
 * `pretty`, and the ACL token from the headers. Bad values are a 400 naming the parameter.
 */
import { DurationParseError, parseDuration, NANOS_PER_MS } from '../structs/duration.js';
import { badRequest } from './http-errors.js';

/** Nomad's default blocking wait (5 minutes). */
export const DEFAULT_WAIT_MS = 5 * 60_000;
/** Nomad's cap on a blocking wait (10 minutes). */
export const MAX_WAIT_MS = 10 * 60_000;

/** The parsed query options of one request. */
export interface QueryOptions {
  /** Block until the result's index is greater than this (0: do not block). */
  index: number;
  /** How long to block, in ms, before jitter. */
  waitMs: number;
  prefix: string;
  namespace: string;
  pretty: boolean;
  /** The token sent in X-Nomad-Token or Authorization: Bearer, or "" (not enforced yet). */
  token: string;
}

/** A request's query string as fastify hands it over. */
export type RawQuery = Record<string, string | string[] | undefined>;
/** A request's headers as fastify hands them over. */
export type RawHeaders = Record<string, string | string[] | undefined>;

/** The first value of a query parameter (repeated parameters keep the first, as Go does). */
export function queryParam(q: RawQuery, name: string): string | undefined {
  const v = q[name];
  return Array.isArray(v) ? v[0] : v;
}

/** True when a boolean flag parameter is present and not "false" (`?pretty`, `?purge=true`). */
export function queryFlag(q: RawQuery, name: string): boolean {
  const v = queryParam(q, name);
  if (v === undefined) return false;
  if (v === '' || v === 'true' || v === '1') return true;
  if (v === 'false' || v === '0') return false;
  throw badRequest(`invalid value for "${name}": ${JSON.stringify(v)} (want true or false)`);
}

/** Parses the options every read accepts; throws a 400 naming the bad parameter. */
export function parseQueryOptions(q: RawQuery, headers: RawHeaders): QueryOptions {
  const rawIndex = queryParam(q, 'index');
  let index = 0;
  if (rawIndex !== undefined && rawIndex !== '') {
    if (!/^\d+$/.test(rawIndex)) throw badRequest(`invalid value for "index": ${JSON.stringify(rawIndex)} (want a non-negative integer)`);
    index = Number(rawIndex);
  }
  const rawWait = queryParam(q, 'wait');
  let waitMs = DEFAULT_WAIT_MS;
  if (rawWait !== undefined && rawWait !== '') {
    try {
      // A Go duration; "0" means the default, as in Nomad.
      const ns = parseDuration(rawWait);
      if (ns < 0) throw new DurationParseError(rawWait);
      waitMs = ns === 0 ? DEFAULT_WAIT_MS : Math.min(MAX_WAIT_MS, ns / NANOS_PER_MS);
    } catch (err) {
      if (err instanceof DurationParseError) throw badRequest(`invalid value for "wait": ${JSON.stringify(rawWait)} (want a duration such as 30s or 5m)`);
      throw err;
    }
  }
  return {
    index,
    waitMs,
    prefix: queryParam(q, 'prefix') ?? '',
    namespace: queryParam(q, 'namespace') || 'default',
    pretty: queryParam(q, 'pretty') !== undefined && queryParam(q, 'pretty') !== 'false',
    token: tokenFromHeaders(headers),
  };
}

/** The ACL token of a request: X-Nomad-Token, else an Authorization: Bearer token, else "". */
export function tokenFromHeaders(headers: RawHeaders): string {
  const first = (v: string | string[] | undefined): string | undefined => (Array.isArray(v) ? v[0] : v);
  const nomad = first(headers['x-nomad-token']);
  if (nomad) return nomad.trim();
  const auth = first(headers['authorization']);
  if (auth) {
    const m = /^Bearer\s+(.+)$/i.exec(auth.trim());
    if (m) return m[1]!.trim();
  }
  return '';
}
