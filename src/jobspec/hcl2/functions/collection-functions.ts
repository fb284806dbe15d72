/**
 * cty's collection functions: lists (concat, flatten, slice, sort, …), maps (keys, merge,
 * lookup, zipmap, …) and sets (distinct, setunion, setproduct, …). Every result counts
 * against the evaluation budget, so `setproduct` or `range` cannot build a huge value.
 */
import type { HclValue } from '../expression-ast.js';
import type { EvalBudget } from '../eval-budget.js';
import type { HclFunction } from '../expression-evaluator.js';
import { evalError } from '../hcl-eval-error.js';
import { hclEqual, isHclObject, ownGet, setKey, sortedKeys, toInt, toList, toMap, toNum, toStr, typeName, type HclObject } from '../hcl-value.js';
import { defineFunction } from './define-function.js';
import { graphemes } from './string-functions.js';

/** cty's own bound on range(): more is refused rather than built. */
export const MAX_RANGE_ELEMENTS = 1024;

function distinct(list: HclValue[]): HclValue[] {
  const out: HclValue[] = [];
  for (const v of list) if (!out.some((x) => hclEqual(x, v))) out.push(v);
  return out;
}

function flatten(list: HclValue[], budget: EvalBudget): HclValue[] {
  const out: HclValue[] = [];
  for (const v of list) {
    budget.tick();
    if (Array.isArray(v)) out.push(...flatten(v, budget));
    else out.push(v);
  }
  return out;
}

function range(args: HclValue[], budget: EvalBudget): HclValue {
  const nums = args.map((a, i) => toNum(a, `argument ${i + 1}`));
  const [start, end, step] = nums.length === 1 ? [0, nums[0]!, 1] : [nums[0]!, nums[1]!, nums[2] ?? (nums[1]! >= nums[0]! ? 1 : -1)];
  if (step === 0) throw evalError('step must not be zero');
  if ((step > 0 && start > end) || (step < 0 && start < end)) {
    if (nums.length === 3) throw evalError(`step ${step} moves away from the end ${end}`);
  }
  const count = Math.max(0, Math.ceil((end - start) / step));
  if (count > MAX_RANGE_ELEMENTS) {
    throw evalError(`more than ${MAX_RANGE_ELEMENTS} values were generated; decrease the difference between start and end or use a larger step`);
  }
  budget.collection(count);
  return Array.from({ length: count }, (_v, i) => start + i * step);
}

function setproduct(args: HclValue[], budget: EvalBudget): HclValue {
  const lists = args.map((a, i) => toList(a, `argument ${i + 1}`));
  let total = 1;
  for (const l of lists) {
    total *= l.length;
    budget.collection(total);
  }
  let out: HclValue[][] = [[]];
  for (const l of lists) out = out.flatMap((prefix) => l.map((v) => [...prefix, v]));
  return out;
}

function lookup(args: HclValue[]): HclValue {
  const m = toMap(args[0]!, 'map');
  const key = toStr(args[1]!, 'key');
  const v = ownGet(m, key);
  if (v !== undefined) return v;
  if (args.length > 2) return args[2]!;
  throw evalError(`the given key ${JSON.stringify(key)} does not exist in the map and no default was given`);
}

function merge(args: HclValue[]): HclValue {
  const out: HclObject = {};
  for (const [i, a] of args.entries()) {
    if (a === null) continue;
    const m = toMap(a, `argument ${i + 1}`);
    for (const k of Object.keys(m)) setKey(out, k, m[k]!);
  }
  return out;
}

function slice(args: HclValue[]): HclValue {
  const list = toList(args[0]!, 'list');
  const start = toInt(args[1]!, 'start index');
  const end = toInt(args[2]!, 'end index');
  if (start < 0 || end > list.length || start > end) throw evalError(`slice indexes ${start}..${end} are out of range for a list of ${list.length}`);
  return list.slice(start, end);
}

function length(args: HclValue[]): HclValue {
  const v = args[0]!;
  if (Array.isArray(v)) return v.length;
  if (isHclObject(v)) return Object.keys(v).length;
  if (typeof v === 'string') return graphemes(v).length;
  throw evalError(`length() takes a string, list or map, got ${typeName(v)}`);
}

function element(args: HclValue[]): HclValue {
  const list = toList(args[0]!, 'list');
  const i = toInt(args[1]!, 'index');
  if (list.length === 0) throw evalError('cannot use element() with an empty list');
  if (i < 0) throw evalError('element() index must not be negative');
  return list[i % list.length]!;
}

function chunklist(args: HclValue[], budget: EvalBudget): HclValue {
  const list = toList(args[0]!, 'list');
  const size = toInt(args[1]!, 'size');
  if (size < 0) throw evalError('the size must not be negative');
  if (size === 0) return [list];
  const out: HclValue[] = [];
  for (let i = 0; i < list.length; i += size) out.push(list.slice(i, i + size));
  budget.collection(out.length);
  return out;
}

function zipmap(args: HclValue[]): HclValue {
  const keys = toList(args[0]!, 'keys');
  const values = toList(args[1]!, 'values');
  if (keys.length !== values.length) throw evalError(`the number of keys (${keys.length}) does not match the number of values (${values.length})`);
  const out: HclObject = {};
  keys.forEach((k, i) => setKey(out, toStr(k, 'key'), values[i]!));
  return out;
}

function sort(args: HclValue[]): HclValue {
  const list = toList(args[0]!, 'list').map((v) => {
    if (v === null) throw evalError('given list element is null; a null value cannot be sorted');
    return toStr(v);
  });
  return list.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/** Collection functions by name. */
export const COLLECTION_FUNCTIONS: Readonly<Record<string, HclFunction>> = {
  chunklist: defineFunction(2, 2, chunklist),
  coalesce: defineFunction(1, Infinity, (args) => {
    const found = args.find((a) => a !== null);
    if (found === undefined) throw evalError('no non-null arguments');
    return found;
  }),
  coalescelist: defineFunction(1, Infinity, (args) => {
    for (const [i, a] of args.entries()) if (toList(a, `argument ${i + 1}`).length > 0) return a;
    throw evalError('no non-empty lists');
  }),
  compact: defineFunction(1, 1, ([l]) => toList(l!, 'list').filter((v) => v !== null && v !== '')),
  concat: defineFunction(1, Infinity, (args, budget) => {
    const out = args.flatMap((a, i) => toList(a, `argument ${i + 1}`));
    budget.collection(out.length);
    return out;
  }),
  contains: defineFunction(2, 2, ([l, v]) => toList(l!, 'list').some((x) => hclEqual(x, v!))),
  distinct: defineFunction(1, 1, ([l]) => distinct(toList(l!, 'list'))),
  element: defineFunction(2, 2, element),
  flatten: defineFunction(1, 1, ([l], budget) => flatten(toList(l!, 'list'), budget)),
  index: defineFunction(2, 2, ([l, v]) => {
    const i = toList(l!, 'list').findIndex((x) => hclEqual(x, v!));
    if (i < 0) throw evalError('item not found');
    return i;
  }),
  keys: defineFunction(1, 1, ([m]) => sortedKeys(toMap(m!, 'map'))),
  length: defineFunction(1, 1, length),
  lookup: defineFunction(2, 3, lookup),
  merge: defineFunction(0, Infinity, merge),
  range: defineFunction(1, 3, range),
  setintersection: defineFunction(1, Infinity, (args) => {
    const lists = args.map((a, i) => distinct(toList(a, `argument ${i + 1}`)));
    return lists[0]!.filter((v) => lists.every((l) => l.some((x) => hclEqual(x, v))));
  }),
  setproduct: defineFunction(1, Infinity, setproduct),
  setunion: defineFunction(1, Infinity, (args) => distinct(args.flatMap((a, i) => toList(a, `argument ${i + 1}`)))),
  slice: defineFunction(3, 3, slice),
  sort: defineFunction(1, 1, sort),
  values: defineFunction(1, 1, ([m]) => {
    const map = toMap(m!, 'map');
    return sortedKeys(map).map((k) => map[k]!);
  }),
  zipmap: defineFunction(2, 2, zipmap),
};
