/**
 * Conversions between HCL2 values as cty does them: numbers and bools convert to strings,
 * numeric strings to numbers, "true"/"false" to bools; lists and maps never to primitives.
 * Each conversion failure is a recoverable evaluation error naming what was expected.
 */
import type { HclValue } from './expression-ast.js';
import { evalError } from './hcl-eval-error.js';

/** A map/object value. */
export type HclObject = { [key: string]: HclValue };

export function isHclObject(v: HclValue | undefined): v is HclObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** cty's name for the value's type, for messages. */
export function typeName(v: HclValue): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'list';
  if (typeof v === 'object') return 'object';
  return typeof v;
}

/** A number rendered as cty renders it (no exponent for ordinary integers). */
export function numberToString(n: number): string {
  if (Number.isInteger(n) && Math.abs(n) < 1e21) return n.toFixed(0);
  return String(n);
}

export function toStr(v: HclValue, what = 'value'): string {
  if (typeof v === 'string') return v;
  if (typeof v === 'number') return numberToString(v);
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  throw evalError(`${what} must be a string, got ${typeName(v)}`);
}

export function toNum(v: HclValue, what = 'value'): number {
  if (typeof v === 'number') return v;
  if (typeof v === 'string' && v.trim() !== '') {
    const n = Number(v);
    if (Number.isFinite(n)) return n;
  }
  throw evalError(`${what} must be a number, got ${typeof v === 'string' ? JSON.stringify(v) : typeName(v)}`);
}

export function toInt(v: HclValue, what = 'value'): number {
  const n = toNum(v, what);
  if (!Number.isInteger(n)) throw evalError(`${what} must be a whole number, got ${n}`);
  return n;
}

export function toBool(v: HclValue, what = 'value'): boolean {
  if (typeof v === 'boolean') return v;
  if (v === 'true') return true;
  if (v === 'false') return false;
  throw evalError(`${what} must be a bool, got ${typeof v === 'string' ? JSON.stringify(v) : typeName(v)}`);
}

export function toList(v: HclValue, what = 'value'): HclValue[] {
  if (Array.isArray(v)) return v;
  throw evalError(`${what} must be a list, got ${typeName(v)}`);
}

export function toMap(v: HclValue, what = 'value'): HclObject {
  if (isHclObject(v)) return v;
  throw evalError(`${what} must be a map or object, got ${typeName(v)}`);
}

/** Structural equality, as HCL's `==` (no conversion between types). */
export function hclEqual(a: HclValue, b: HclValue): boolean {
  if (a === b) return true;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((x, i) => hclEqual(x, b[i]!));
  }
  if (isHclObject(a) && isHclObject(b)) {
    const ka = Object.keys(a);
    if (ka.length !== Object.keys(b).length) return false;
    return ka.every((k) => Object.prototype.hasOwnProperty.call(b, k) && hclEqual(a[k]!, b[k]!));
  }
  return false;
}

/** Keys of a map in cty's order (lexical). */
export function sortedKeys(m: HclObject): string[] {
  return Object.keys(m).sort((x, y) => (x < y ? -1 : x > y ? 1 : 0));
}

/** Sets a key as plain data: a key such as "__proto__" must not change the object's prototype. */
export function setKey(m: HclObject, key: string, value: HclValue): void {
  if (key === '__proto__') Object.defineProperty(m, key, { value, enumerable: true, writable: true, configurable: true });
  else m[key] = value;
}

/** Reads an own key only (never the prototype chain). */
export function ownGet(m: HclObject, key: string): HclValue | undefined {
  return Object.prototype.hasOwnProperty.call(m, key) ? m[key] : undefined;
}
