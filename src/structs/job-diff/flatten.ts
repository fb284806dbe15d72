/**
 * Flattening of job blocks into `name → string` maps, the form field diffs compare.
 *
 * `flattenPrimitives` keeps a block's own scalar fields and its string maps (`Meta[team]`),
 * skipping nested blocks and lists — those are diffed as objects of their own.
 * `flattenAll` descends into everything (`args[0]`, `port_map[0][http]`), for free-form
 * maps such as a task's driver config.
 */

export type Flat = Map<string, string>;

/** Fields whose object value is a map of strings rather than a nested block. */
export const STRING_MAP_FIELDS: ReadonlySet<string> = new Set([
  'Meta',
  'Env',
  'CanaryMeta',
  'TaggedAddresses',
  'GetterOptions',
  'GetterHeaders',
  'Target',
]);

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function isScalar(v: unknown): v is string | number | boolean {
  return typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';
}

export function formatScalar(v: string | number | boolean): string {
  return typeof v === 'string' ? v : String(v);
}

/** A block's scalar fields and string maps; null for an absent block. */
export function flattenPrimitives(block: unknown, filter: readonly string[] = []): Flat | null {
  if (!isPlainObject(block)) return null;
  const flat: Flat = new Map();
  for (const [key, value] of Object.entries(block)) {
    if (isScalar(value)) flat.set(key, formatScalar(value));
    else if (isPlainObject(value) && STRING_MAP_FIELDS.has(key)) {
      for (const [mapKey, mapValue] of Object.entries(value)) {
        if (isScalar(mapValue)) flat.set(`${key}[${mapKey}]`, formatScalar(mapValue));
      }
    }
  }
  for (const name of filter) flat.delete(name);
  return flat;
}

/** Everything below a free-form value, keyed by its path; null for an absent value. */
export function flattenAll(value: unknown): Flat | null {
  if (value === undefined) return null;
  const flat: Flat = new Map();
  const walk = (prefix: string, v: unknown): void => {
    if (v === null || v === undefined) flat.set(prefix, 'nil');
    else if (isScalar(v)) flat.set(prefix, formatScalar(v));
    else if (Array.isArray(v)) v.forEach((item, i) => walk(`${prefix}[${i}]`, item));
    else if (isPlainObject(v)) for (const [k, item] of Object.entries(v)) walk(prefix === '' ? k : `${prefix}[${k}]`, item);
  };
  walk('', value);
  return flat;
}

/** A canonical text of a value (keys sorted), for equality and set membership. */
export function canonicalText(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    isPlainObject(v) ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, v[k]])) : v,
  ) ?? 'undefined';
}

export function deepEqual(a: unknown, b: unknown): boolean {
  return canonicalText(a ?? null) === canonicalText(b ?? null);
}
