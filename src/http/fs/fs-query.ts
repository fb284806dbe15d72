/**
 * The query parameters of the file and log routes (`offset`, `origin`, `limit`, `type`, …),
 * each validated with a 400 that names it.
 */
import { badRequest } from '../http-errors.js';
import { queryParam, type RawQuery } from '../query-options.js';
import { LogType } from './log-files.js';

/** Where an offset counts from. */
export const Origin = { Start: 'start', End: 'end' } as const;
export type Origin = (typeof Origin)[keyof typeof Origin];

/** A non-negative integer parameter, `fallback` when absent. */
export function intParam(q: RawQuery, name: string, fallback: number, allowNegative = false): number {
  const v = queryParam(q, name);
  if (v === undefined || v === '') return fallback;
  const re = allowNegative ? /^-?\d+$/ : /^\d+$/;
  if (!re.test(v) || !Number.isSafeInteger(Number(v))) {
    throw badRequest(`invalid value for "${name}": ${JSON.stringify(v)} (want ${allowNegative ? 'an' : 'a non-negative'} integer)`);
  }
  return Number(v);
}

/** `origin`: "start" (default) or "end". */
export function originParam(q: RawQuery): Origin {
  const v = queryParam(q, 'origin');
  if (v === undefined || v === '' || v === Origin.Start) return Origin.Start;
  if (v === Origin.End) return Origin.End;
  throw badRequest(`invalid value for "origin": ${JSON.stringify(v)} (want "start" or "end")`);
}

/** `type` of the logs route: "stdout" or "stderr" (required, as in Nomad). */
export function logTypeParam(q: RawQuery): LogType {
  const v = queryParam(q, 'type');
  if (v === LogType.Stdout || v === LogType.Stderr) return v;
  if (v === undefined || v === '') throw badRequest('missing "type" parameter: "stdout" or "stderr"');
  throw badRequest(`invalid value for "type": ${JSON.stringify(v)} (want "stdout" or "stderr")`);
}

/** A required non-empty string parameter. */
export function requiredParam(q: RawQuery, name: string, what: string): string {
  const v = queryParam(q, name);
  if (v === undefined || v === '') throw badRequest(`missing "${name}" parameter: ${what}`);
  return v;
}
