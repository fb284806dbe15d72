/**
 * HCL2 type constraints (`string`, `list(number)`, `map(any)`, `object({…})`, …) as written
 * in a variable's `type` and in `convert(value, type)`, and the conversion of a value to one,
 * as cty converts: primitives to each other where the text allows, collections element-wise.
 */
import type { Expr, HclValue } from './expression-ast.js';
import { evalError } from './hcl-eval-error.js';
import { isHclObject, setKey, toBool, toNum, toStr, typeName, type HclObject } from './hcl-value.js';

/** A parsed type constraint. */
export type TypeConstraint =
  | { kind: 'any' | 'string' | 'number' | 'bool' }
  | { kind: 'list' | 'set' | 'map'; element: TypeConstraint }
  | { kind: 'tuple'; elements: TypeConstraint[] }
  | { kind: 'object'; attrs: Record<string, TypeConstraint> };

/** Reads a type constraint from its parsed expression; anything else is an error naming it. */
export function typeFromExpr(e: Expr): TypeConstraint {
  if (e.kind === 'traversal' && e.steps.length === 0 && ['any', 'string', 'number', 'bool'].includes(e.root)) {
    return { kind: e.root as 'any' | 'string' | 'number' | 'bool' };
  }
  if (e.kind === 'call' && e.args.length === 1) {
    const arg = e.args[0]!;
    switch (e.name) {
      case 'list':
      case 'set':
      case 'map':
        return { kind: e.name, element: typeFromExpr(arg) };
      case 'tuple':
        if (arg.kind === 'tuple') return { kind: 'tuple', elements: arg.items.map(typeFromExpr) };
        break;
      case 'object':
        if (arg.kind === 'object') {
          const attrs: Record<string, TypeConstraint> = {};
          for (const item of arg.items) {
            if (item.key.kind !== 'literal' || typeof item.key.value !== 'string') throw evalError('object type attribute names must be plain names');
            attrs[item.key.value] = typeFromExpr(item.value);
          }
          return { kind: 'object', attrs };
        }
        break;
    }
  }
  throw evalError('invalid type constraint: expected string, number, bool, any, list(…), set(…), map(…), tuple([…]) or object({…})');
}

/** Converts `v` to the type, or throws an error saying what did not fit. */
export function convertValue(v: HclValue, t: TypeConstraint, what = 'value'): HclValue {
  if (v === null) return v;
  switch (t.kind) {
    case 'any':
      return v;
    case 'string':
      if (typeof v === 'object') throw evalError(`${what}: string required, got ${typeName(v)}`);
      return toStr(v, what);
    case 'number':
      return toNum(v, what);
    case 'bool':
      return toBool(v, what);
    case 'list':
    case 'set': {
      if (!Array.isArray(v)) throw evalError(`${what}: ${t.kind} required, got ${typeName(v)}`);
      const items = v.map((x, i) => convertValue(x, t.element, `${what}[${i}]`));
      if (t.kind === 'list') return items;
      return items.filter((x, i) => items.findIndex((y) => JSON.stringify(y) === JSON.stringify(x)) === i);
    }
    case 'tuple':
      if (!Array.isArray(v) || v.length !== t.elements.length) throw evalError(`${what}: tuple of ${t.elements.length} elements required`);
      return v.map((x, i) => convertValue(x, t.elements[i]!, `${what}[${i}]`));
    case 'map': {
      if (!isHclObject(v)) throw evalError(`${what}: map required, got ${typeName(v)}`);
      const out: HclObject = {};
      for (const [k, x] of Object.entries(v)) setKey(out, k, convertValue(x, t.element, `${what}["${k}"]`));
      return out;
    }
    case 'object': {
      if (!isHclObject(v)) throw evalError(`${what}: object required, got ${typeName(v)}`);
      const out: HclObject = {};
      for (const [k, at] of Object.entries(t.attrs)) {
        if (!Object.prototype.hasOwnProperty.call(v, k)) throw evalError(`${what}: attribute "${k}" is required`);
        setKey(out, k, convertValue(v[k]!, at, `${what}.${k}`));
      }
      return out;
    }
    default: {
      const never: never = t;
      throw evalError(`unknown type ${String(never)}`);
    }
  }
}

/** True for collection types, whose `-var` text is JSON/HCL rather than a bare string. */
export function isCollectionType(t: TypeConstraint): boolean {
  return !['any', 'string', 'number', 'bool'].includes(t.kind);
}
