/**
 * JSON as cty encodes it: object keys sorted, and `<`, `>`, `&` escaped as Go's encoder
 * does, so `jsonencode` output matches what Nomad would store byte for byte.
 */
import type { HclValue } from '../expression-ast.js';
import { evalError, HclEvalError, HclEvalErrorCode } from '../hcl-eval-error.js';
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

/** Deepest nesting of arrays and objects jsondecode accepts. */
export const MAX_JSON_DEPTH = 256;

/** Throws when `text` nests arrays/objects deeper than MAX_JSON_DEPTH (strings skipped). */
function checkDepth(text: string): void {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92) i++; // backslash escapes the next character
      else if (c === 34) inString = false;
    } else if (c === 34) {
      inString = true;
    } else if (c === 91 || c === 123) {
      if (++depth > MAX_JSON_DEPTH) throw new HclEvalError(HclEvalErrorCode.Limit, `JSON nested deeper than ${MAX_JSON_DEPTH} levels`);
    } else if (c === 93 || c === 125) {
      depth--;
    }
  }
}

/** Decodes JSON text into a value; a syntax error is recoverable and says where. */
export function jsonDecode(text: string): HclValue {
  checkDepth(text);
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
