/**
 * Reading values out of decoded HCL/JSON driver and plugin config: hcl2json turns every block
 * into a list of bodies and numbers may arrive as strings, so each reader accepts both forms
 * and throws DriverError (BadConfig) naming the offending field otherwise.
 */
import { parseDuration } from '../../structs/duration.js';
import { didYouMean } from '../../structs/name-suggestion.js';
import { DriverError, DriverErrorCode } from '../driver.js';

export type Obj = Record<string, unknown>;

/** A BadConfig DriverError naming `field`. */
export function badConfig(field: string, message: string): DriverError {
  return new DriverError(DriverErrorCode.BadConfig, `docker: config option "${field}" ${message}`, false);
}

/** A block body (`x { … }`), given as an object or as hcl2json's one-element list. */
export function blockOf(o: Obj, key: string, field: string): Obj | undefined {
  const v = o[key];
  if (v === undefined || v === null) return undefined;
  const first = Array.isArray(v) ? (v.length === 0 ? undefined : v[0]) : v;
  if (first === undefined) return undefined;
  if (typeof first !== 'object' || first === null || Array.isArray(first)) throw badConfig(field, 'must be a block');
  return first as Obj;
}

/** Every body of a repeatable block (`mount { … } mount { … }`). */
export function blocksOf(o: Obj, key: string, field: string): Obj[] {
  const v = o[key];
  if (v === undefined || v === null) return [];
  const list = Array.isArray(v) ? v : [v];
  return list.map((b, i) => {
    if (typeof b !== 'object' || b === null || Array.isArray(b)) throw badConfig(`${field}[${i}]`, 'must be a block');
    return b as Obj;
  });
}

export function strOf(o: Obj, key: string, field: string): string | undefined {
  const v = o[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (typeof v !== 'string') throw badConfig(field, `must be a string, got ${JSON.stringify(v)}`);
  return v;
}

export function boolOf(o: Obj, key: string, field: string): boolean | undefined {
  const v = o[key];
  if (v === undefined || v === null) return undefined;
  if (v === 'true' || v === 'false') return v === 'true';
  if (typeof v !== 'boolean') throw badConfig(field, `must be a boolean, got ${JSON.stringify(v)}`);
  return v;
}

export function intOf(o: Obj, key: string, field: string): number | undefined {
  const v = o[key];
  if (v === undefined || v === null) return undefined;
  const n = typeof v === 'string' && /^-?\d+$/.test(v.trim()) ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isInteger(n)) throw badConfig(field, `must be an integer, got ${JSON.stringify(v)}`);
  return n;
}

export function strListOf(o: Obj, key: string, field: string): string[] | undefined {
  const v = o[key];
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v)) throw badConfig(field, 'must be a list of strings');
  return v.map((x, i) => {
    if (typeof x === 'string') return x;
    if (typeof x === 'number' || typeof x === 'boolean') return String(x);
    throw badConfig(`${field}[${i}]`, 'must be a string');
  });
}

/** A string map given as an attribute or block(s) (`labels { a = "b" }`). */
export function strMapOf(o: Obj, key: string, field: string): Record<string, string> | undefined {
  const v = o[key];
  if (v === undefined || v === null) return undefined;
  const bodies = Array.isArray(v) ? v : [v];
  const out: Record<string, string> = {};
  for (const b of bodies) {
    if (typeof b !== 'object' || b === null || Array.isArray(b)) throw badConfig(field, 'must be a map of strings');
    for (const [k, val] of Object.entries(b as Obj)) {
      if (typeof val === 'object' && val !== null) throw badConfig(`${field}.${k}`, 'must be a string');
      out[k] = String(val);
    }
  }
  return out;
}

/** A Go duration string (or nanoseconds) as milliseconds. */
export function durationMsOf(o: Obj, key: string, field: string): number | undefined {
  const v = o[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'number') return v / 1_000_000;
  if (typeof v !== 'string') throw badConfig(field, `must be a duration such as "3m", got ${JSON.stringify(v)}`);
  try {
    return parseDuration(v) / 1_000_000;
  } catch {
    throw badConfig(field, `must be a duration such as "3m", got ${JSON.stringify(v)}`);
  }
}

/** Refuses keys outside `known`, naming the first one found and the closest known one. */
export function refuseUnknown(o: Obj, known: readonly string[], prefix: string): void {
  const set = new Set(known);
  for (const k of Object.keys(o)) {
    if (!set.has(k)) throw badConfig(`${prefix}${k}`, `is not supported by this docker driver.${didYouMean(k, known)}`.replace(/\.$/, ''));
  }
}
