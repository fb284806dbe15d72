/**
 * JSON as cty encodes it: object keys sorted, and `<`, `>`, `&` escaped as Go's encoder
 * does, so `jsonencode` output matches what Nomad would store byte for byte.
 */
import type { HclValue } from '../expression-ast.js';
import { evalError } from '../hcl-eval-error.js';
import { isHclObject, setKey, sortedKeys } from '../hcl-value.js';

function goEscape(json: string): string {
  return json.replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** Encodes a value as compact JSON with sorted keys. */
export function jsonEncode(v: HclValue): string {
  if (Array.isArray(v)) return `[${v.map(jsonEncode).join(',')}]`;
  if (isHclObject(v)) return `{${sortedKeys(v).map((k) => `${goEscape(JSON.stringify(k))}:${jsonEncode(v[k]!)}`).join(',')}}`;
  if (typeof v === 'number' && !Number.isFinite(v)) throw evalError('cannot encode an infinite number as JSON');
  return goEscape(JSON.stringify(v));
}

/** Decodes JSON text into a value; a syntax error is recoverable and says where. */
export function jsonDecode(text: string): HclValue {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw evalError(`invalid JSON: ${(err as Error).message}`);
  }
  return fromJson(raw);
}

function fromJson(raw: unknown): HclValue {
  if (Array.isArray(raw)) return raw.map(fromJson);
  if (typeof raw === 'object' && raw !== null) {
    const out: { [k: string]: HclValue } = {};
    for (const [k, v] of Object.entries(raw)) setKey(out, k, fromJson(v));
    return out;
  }
  return raw as HclValue;
}
