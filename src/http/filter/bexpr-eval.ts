/**
 * Evaluates a parsed filter expression (bexpr-parse.ts) against one JSON object, as go-bexpr
 * evaluates it against Nomad's structs:
 * - a selector walks object fields and map keys; through an array it collects the field of
 *   every element (`TaskGroups.Name` is the list of the groups' names);
 * - `==`/`!=` compare the literal with the value's own type (numbers and booleans parsed), and
 *   on a list hold when any element matches;
 * - `in`/`contains` test list membership, map keys, or a substring of a string;
 * - `is empty` holds for a missing value, null, "", [] and {}; `is nil` only for a missing value
 *   or null (go-bexpr: a nil pointer, map or slice; a bool or a string is never nil);
 * - a missing selector never matches `==`, `in`, `contains` or `matches`.
 */
import type { FilterExpr } from './bexpr-parse.js';

const MISSING = Symbol('missing');
type Found = unknown | typeof MISSING;

function select(value: unknown, path: readonly string[]): Found {
  let cur: unknown = value;
  for (let i = 0; i < path.length; i++) {
    if (Array.isArray(cur)) {
      const rest = path.slice(i);
      const out: unknown[] = [];
      for (const el of cur) {
        const v = select(el, rest);
        if (v === MISSING) continue;
        if (Array.isArray(v)) out.push(...(v as unknown[]));
        else out.push(v);
      }
      return out;
    }
    if (cur === null || typeof cur !== 'object') return MISSING;
    const obj = cur as Record<string, unknown>;
    if (!Object.prototype.hasOwnProperty.call(obj, path[i]!)) return MISSING;
    cur = obj[path[i]!];
  }
  return cur;
}

/** The literal compared with a scalar, in that scalar's type. */
function equalScalar(v: unknown, literal: string): boolean {
  if (typeof v === 'string') return v === literal;
  if (typeof v === 'number') return literal.trim() !== '' && Number(literal) === v;
  if (typeof v === 'boolean') return (literal === 'true' && v) || (literal === 'false' && !v);
  if (v === null) return literal === '' || literal === 'null';
  return false;
}

function equals(v: Found, literal: string): boolean {
  if (v === MISSING) return false;
  if (Array.isArray(v)) return v.some((el) => equalScalar(el, literal));
  return equalScalar(v, literal);
}

function isEmpty(v: Found): boolean {
  if (v === MISSING || v === null || v === undefined || v === '') return true;
  if (Array.isArray(v)) return v.length === 0;
  if (typeof v === 'object') return Object.keys(v as object).length === 0;
  return false;
}

function isNil(v: Found): boolean {
  return v === MISSING || v === null || v === undefined;
}

function contains(v: Found, literal: string): boolean {
  if (v === MISSING || v === null) return false;
  if (typeof v === 'string') return v.includes(literal);
  if (Array.isArray(v)) return v.some((el) => equalScalar(el, literal));
  if (typeof v === 'object') return Object.prototype.hasOwnProperty.call(v, literal);
  return false;
}

function matches(v: Found, re: RegExp): boolean {
  if (typeof v === 'string') return re.test(v);
  if (Array.isArray(v)) return v.some((el) => typeof el === 'string' && re.test(el));
  return false;
}

/** True when `datum` satisfies the expression. */
export function evaluateFilter(expr: FilterExpr, datum: unknown): boolean {
  switch (expr.kind) {
    case 'and':
      return evaluateFilter(expr.left, datum) && evaluateFilter(expr.right, datum);
    case 'or':
      return evaluateFilter(expr.left, datum) || evaluateFilter(expr.right, datum);
    case 'not':
      return !evaluateFilter(expr.expr, datum);
    case 'match': {
      const v = select(datum, expr.selector);
      const lit = expr.value ?? '';
      switch (expr.op) {
        case '==':
          return equals(v, lit);
        case '!=':
          return !equals(v, lit);
        case 'is empty':
          return isEmpty(v);
        case 'is not empty':
          return !isEmpty(v);
        case 'is nil':
          return isNil(v);
        case 'is not nil':
          return !isNil(v);
        case 'in':
        case 'contains':
          return contains(v, lit);
        case 'not in':
        case 'not contains':
          return !contains(v, lit);
        case 'matches':
          return matches(v, expr.regex!);
        case 'not matches':
          return !matches(v, expr.regex!);
      }
    }
  }
}
