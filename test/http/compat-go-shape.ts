/**
 * A checker for "would Go's encoding/json decode this into the api struct": each schema names
 * the Go type of the fields the official client decodes. Go fails the whole call on a type
 * mismatch; null is fine for pointers, slices, maps and time.Time (its UnmarshalJSON treats
 * null as a no-op); missing and extra fields are fine.
 */

/** A Go type as the checker understands it. */
export type GoType =
  | 'string'
  | 'int' // any Go integer, signed: a JSON number without a fraction
  | 'uint' // a non-negative integer
  | 'float'
  | 'bool'
  | 'duration' // time.Duration: an integer count of nanoseconds
  | 'time' // time.Time: an RFC 3339 string (or null)
  | 'bytes' // []byte: base64 text (or null)
  | 'any' // interface{}
  | { slice: GoType }
  | { map: GoType }
  | { ptr: GoType }
  | { struct: GoStruct };

/** The fields of a Go struct, by JSON name. */
export type GoStruct = { [field: string]: GoType };

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;

/** Shorthands for building schemas. */
export const slice = (t: GoType): GoType => ({ slice: t });
export const map = (t: GoType): GoType => ({ map: t });
export const ptr = (t: GoType): GoType => ({ ptr: t });
export const struct = (s: GoStruct): GoType => ({ struct: s });

/** Every place `value` would fail to decode as `type`, as "path: problem" strings. */
export function goShapeErrors(value: unknown, type: GoType, path = '$'): string[] {
  const bad = (want: string) => [`${path}: want ${want}, got ${JSON.stringify(value)?.slice(0, 80)}`];
  if (typeof type === 'string') {
    switch (type) {
      case 'string':
        return typeof value === 'string' ? [] : bad('string');
      case 'int':
      case 'duration':
        return typeof value === 'number' && Number.isInteger(value) ? [] : bad(type);
      case 'uint':
        return typeof value === 'number' && Number.isInteger(value) && value >= 0 ? [] : bad('uint');
      case 'float':
        return typeof value === 'number' ? [] : bad('float');
      case 'bool':
        return typeof value === 'boolean' ? [] : bad('bool');
      case 'time':
        return value === null || (typeof value === 'string' && RFC3339.test(value)) ? [] : bad('RFC 3339 time');
      case 'bytes':
        return value === null || (typeof value === 'string' && /^[A-Za-z0-9+/]*={0,2}$/.test(value)) ? [] : bad('base64 bytes');
      case 'any':
        return [];
      default: {
        const never: never = type;
        return [`unknown type ${String(never)}`];
      }
    }
  }
  if ('ptr' in type) return value === null ? [] : goShapeErrors(value, type.ptr, path);
  if ('slice' in type) {
    if (value === null) return [];
    if (!Array.isArray(value)) return bad('array');
    return value.flatMap((v, i) => goShapeErrors(v, type.slice, `${path}[${i}]`));
  }
  if ('map' in type) {
    if (value === null) return [];
    if (typeof value !== 'object' || Array.isArray(value)) return bad('object (map)');
    return Object.entries(value as Record<string, unknown>).flatMap(([k, v]) => goShapeErrors(v, type.map, `${path}.${k}`));
  }
  // A struct value (not a pointer): null decodes to its zero value, an array or scalar fails.
  if (value === null) return [];
  if (typeof value !== 'object' || Array.isArray(value)) return bad('object (struct)');
  const obj = value as Record<string, unknown>;
  const out: string[] = [];
  for (const [field, t] of Object.entries(type.struct)) {
    // Go matches JSON keys to fields case-insensitively; an exact key wins.
    const key = field in obj ? field : Object.keys(obj).find((k) => k.toLowerCase() === field.toLowerCase());
    if (key !== undefined) out.push(...goShapeErrors(obj[key], t, `${path}.${field}`));
  }
  return out;
}
