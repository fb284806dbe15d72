/**
 * Evaluates parsed HCL2 expressions against a scope of names (`var`, `local`, iterators of
 * `for` and `dynamic`) and a function table. A reference whose root name the scope does not
 * know evaluates to its own text, `${attr.kernel.name}`, left for the client to interpolate at
 * runtime — what Nomad's jobspec2 does with its UnknownVariable hook.
 */
import type { Expr, HclValue, TemplatePart, Traverser } from './expression-ast.js';
import type { EvalBudget } from './eval-budget.js';
import { evalError, HclEvalError } from './hcl-eval-error.js';
import { convertValue, typeFromExpr } from './type-constraint.js';
import {
  hclEqual,
  isHclObject,
  ownGet,
  setKey,
  sortedKeys,
  toBool,
  toInt,
  toNum,
  toStr,
  typeName,
  type HclObject,
} from './hcl-value.js';

/** A function callable from expressions. */
export interface HclFunction {
  /** Fewest arguments accepted. */
  minArgs: number;
  /** Most arguments accepted (Infinity for variadic functions). */
  maxArgs: number;
  call(args: HclValue[], budget: EvalBudget): HclValue;
}

/** Functions by name. */
export type FunctionTable = ReadonlyMap<string, HclFunction>;

/**
 * A root name whose attributes are computed on first use (locals referencing each other,
 * declared variables); `get` throws for a name that is not declared.
 */
export interface LazyNamespace {
  readonly lazy: true;
  get(name: string): HclValue;
  all(): HclObject;
}

type Binding = HclValue | LazyNamespace;

function isLazy(b: Binding): b is LazyNamespace {
  return typeof b === 'object' && b !== null && (b as Partial<LazyNamespace>).lazy === true;
}

/** The names and functions an expression sees; child scopes add iterator names. */
export class EvalScope {
  constructor(
    private readonly names: ReadonlyMap<string, Binding>,
    readonly functions: FunctionTable,
    readonly budget: EvalBudget,
    private readonly parent?: EvalScope,
  ) {}

  /** A scope that also sees `names` (shadowing outer ones); the outer scope is shared, not copied. */
  with(names: Record<string, HclValue>): EvalScope {
    return new EvalScope(new Map(Object.entries(names)), this.functions, this.budget, this);
  }

  binding(name: string): Binding | undefined {
    // eslint-disable-next-line @typescript-eslint/no-this-alias -- walking the parent chain
    for (let s: EvalScope | undefined = this; s; s = s.parent) {
      const b = s.names.get(name);
      if (b !== undefined) return b;
    }
    return undefined;
  }
}

/** Evaluates an expression; errors are HclEvalError (catchable, or Limit). */
export function evaluate(expr: Expr, scope: EvalScope): HclValue {
  scope.budget.tick();
  const v = evaluateNode(expr, scope);
  // Constructed values are weighed (cached per object), so sharing cannot hide a huge value.
  if (typeof v === 'object' && v !== null) scope.budget.value(v);
  return v;
}

function evaluateNode(expr: Expr, scope: EvalScope): HclValue {
  switch (expr.kind) {
    case 'literal':
      return expr.value;
    case 'template':
      return evalTemplate(expr.parts, scope);
    case 'traversal':
      return evalTraversal(expr.root, expr.steps, expr.source, scope);
    case 'getattr':
      return getAttr(evaluate(expr.target, scope), expr.name);
    case 'index':
      return index(evaluate(expr.target, scope), evaluate(expr.key, scope));
    case 'splat':
      return evalSplat(expr.target, expr.each, scope);
    case 'splat-item': {
      const item = scope.binding(SPLAT_ITEM);
      if (item === undefined || isLazy(item)) throw evalError('splat item outside a splat');
      return item;
    }
    case 'call':
      return evalCall(expr.name, expr.args, expr.expandFinal, scope);
    case 'unary': {
      const v = evaluate(expr.operand, scope);
      return expr.op === '!' ? !toBool(v, 'operand of "!"') : -toNum(v, 'operand of "-"');
    }
    case 'binary':
      return evalBinary(expr.op, expr.left, expr.right, scope);
    case 'conditional':
      return toBool(evaluate(expr.cond, scope), 'condition') ? evaluate(expr.then, scope) : evaluate(expr.else, scope);
    case 'tuple':
      return expr.items.map((e) => evaluate(e, scope));
    case 'object': {
      const out: HclObject = {};
      for (const { key, value } of expr.items) {
        const k = evaluate(key, scope);
        if (k === null) throw evalError('an object key must not be null');
        setKey(out, toStr(k, 'object key'), evaluate(value, scope));
      }
      return out;
    }
    case 'for':
      return evalFor(expr, scope);
    default: {
      const never: never = expr;
      throw evalError(`unknown expression ${String(never)}`);
    }
  }
}

const SPLAT_ITEM = '\u0000splat';

function evalTraversal(root: string, steps: Traverser[], source: string, scope: EvalScope): HclValue {
  const b = scope.binding(root);
  if (b === undefined) {
    // Runtime interpolation (NOMAD_*, attr.*, node.*, meta.*, env[...]) is the client's to do.
    return `\${${source}}`;
  }
  let value: HclValue;
  let rest = steps;
  if (isLazy(b)) {
    const first = steps[0];
    if (first === undefined) {
      value = b.all();
    } else if (first.kind === 'attr') {
      value = b.get(first.name);
      rest = steps.slice(1);
    } else {
      value = index(b.all(), evaluate(first.key, scope));
      rest = steps.slice(1);
    }
  } else {
    value = b;
  }
  for (const step of rest) value = step.kind === 'attr' ? getAttr(value, step.name) : index(value, evaluate(step.key, scope));
  return value;
}

function getAttr(target: HclValue, name: string): HclValue {
  if (isHclObject(target)) {
    const v = ownGet(target, name);
    if (v === undefined) throw evalError(`unsupported attribute: this object does not have an attribute named "${name}"`);
    return v;
  }
  if (target === null) throw evalError(`attempt to get attribute "${name}" from a null value`);
  throw evalError(`unsupported attribute "${name}": a ${typeName(target)} has no attributes`);
}

function index(target: HclValue, key: HclValue): HclValue {
  if (Array.isArray(target)) {
    const i = toInt(key, 'list index');
    if (i < 0 || i >= target.length) throw evalError(`invalid index: index ${i} is out of range for a list of ${target.length} elements`);
    return target[i]!;
  }
  if (isHclObject(target)) {
    const k = toStr(key, 'map key');
    const v = ownGet(target, k);
    if (v === undefined) throw evalError(`invalid index: the given key ${JSON.stringify(k)} does not exist`);
    return v;
  }
  if (target === null) throw evalError('attempt to index a null value');
  throw evalError(`a ${typeName(target)} cannot be indexed`);
}

function evalSplat(target: Expr, each: Expr, scope: EvalScope): HclValue {
  const v = evaluate(target, scope);
  if (v === null) return [];
  const items = Array.isArray(v) ? v : [v];
  scope.budget.collection(items.length);
  return items.map((item) => evaluate(each, scope.with({ [SPLAT_ITEM]: item })));
}

/** Renders one interpolated value as template text. */
function templateText(v: HclValue): string {
  if (v === null) throw evalError('cannot include a null value in a string template');
  if (typeof v === 'object') throw evalError(`cannot include a ${typeName(v)} in a string template`);
  return toStr(v);
}

function evalTemplate(parts: TemplatePart[], scope: EvalScope): HclValue {
  // "${x}" alone keeps x's type, as HCL does.
  if (parts.length === 1 && parts[0]!.kind === 'interp') return evaluate(parts[0].expr, scope);
  return renderParts(parts, scope);
}

function renderParts(parts: TemplatePart[], scope: EvalScope): string {
  let out = '';
  for (const part of parts) {
    switch (part.kind) {
      case 'text':
        out += part.text;
        break;
      case 'interp':
        out += templateText(evaluate(part.expr, scope));
        break;
      case 'if':
        out += renderParts(toBool(evaluate(part.cond, scope), '%{if} condition') ? part.then : part.else, scope);
        break;
      case 'for':
        for (const [k, v] of iterate(evaluate(part.coll, scope), scope)) {
          const names: Record<string, HclValue> = { [part.valueVar]: v };
          if (part.keyVar !== undefined) names[part.keyVar] = k;
          out += renderParts(part.body, scope.with(names));
        }
        break;
      default: {
        const never: never = part;
        throw evalError(`unknown template part ${String(never)}`);
      }
    }
    scope.budget.string(out.length);
  }
  return out;
}

/** Key/value pairs of a collection: index and element of a list, sorted keys of a map. */
function iterate(coll: HclValue, scope: EvalScope): [HclValue, HclValue][] {
  if (Array.isArray(coll)) {
    scope.budget.collection(coll.length);
    return coll.map((v, i) => [i, v]);
  }
  if (isHclObject(coll)) {
    const keys = sortedKeys(coll);
    scope.budget.collection(keys.length);
    return keys.map((k) => [k, coll[k]!]);
  }
  throw evalError(`a for expression needs a list or map, got ${typeName(coll)}`);
}

function evalFor(expr: Extract<Expr, { kind: 'for' }>, scope: EvalScope): HclValue {
  const pairs = iterate(evaluate(expr.coll, scope), scope);
  const list: HclValue[] = [];
  const obj: HclObject = {};
  const groups: Record<string, HclValue[]> = {};
  for (const [k, v] of pairs) {
    const names: Record<string, HclValue> = { [expr.valueVar]: v };
    if (expr.keyVar !== undefined) names[expr.keyVar] = k;
    const inner = scope.with(names);
    if (expr.cond && !toBool(evaluate(expr.cond, inner), 'for expression condition')) continue;
    const value = evaluate(expr.valueExpr, inner);
    if (!expr.keyExpr) {
      list.push(value);
      continue;
    }
    const key = toStr(evaluate(expr.keyExpr, inner), 'for expression key');
    if (expr.group) {
      (Object.prototype.hasOwnProperty.call(groups, key) ? groups[key]! : setGroup(groups, key)).push(value);
    } else if (ownGet(obj, key) !== undefined) {
      throw evalError(`duplicate object key ${JSON.stringify(key)} in a for expression (use "..." after the value to group)`);
    } else {
      setKey(obj, key, value);
    }
  }
  if (!expr.keyExpr) return list;
  if (expr.group) {
    for (const [k, v] of Object.entries(groups)) setKey(obj, k, v);
  }
  return obj;
}

function setGroup(groups: Record<string, HclValue[]>, key: string): HclValue[] {
  const list: HclValue[] = [];
  Object.defineProperty(groups, key, { value: list, enumerable: true, writable: true, configurable: true });
  return list;
}

function evalBinary(op: string, left: Expr, right: Expr, scope: EvalScope): HclValue {
  if (op === '&&' || op === '||') {
    const l = toBool(evaluate(left, scope), `left operand of "${op}"`);
    if (op === '&&' ? !l : l) return l;
    return toBool(evaluate(right, scope), `right operand of "${op}"`);
  }
  const l = evaluate(left, scope);
  const r = evaluate(right, scope);
  switch (op) {
    case '==':
      return hclEqual(l, r);
    case '!=':
      return !hclEqual(l, r);
  }
  const a = toNum(l, `left operand of "${op}"`);
  const b = toNum(r, `right operand of "${op}"`);
  switch (op) {
    case '<':
      return a < b;
    case '<=':
      return a <= b;
    case '>':
      return a > b;
    case '>=':
      return a >= b;
    case '+':
      return a + b;
    case '-':
      return a - b;
    case '*':
      return a * b;
    case '/':
      if (b === 0) throw evalError('divide by zero');
      return a / b;
    case '%':
      if (b === 0) throw evalError('modulo by zero');
      return a % b;
    default:
      throw evalError(`unknown operator "${op}"`);
  }
}

function evalCall(name: string, argExprs: Expr[], expandFinal: boolean, scope: EvalScope): HclValue {
  // try and can see their arguments' errors, so they evaluate them themselves.
  if (name === 'try') {
    if (argExprs.length === 0) throw evalError('try() needs at least one argument');
    let last: HclEvalError | undefined;
    for (const e of argExprs) {
      try {
        return evaluate(e, scope);
      } catch (err) {
        if (!(err instanceof HclEvalError) || !err.catchable) throw err;
        last = err;
      }
    }
    throw evalError(`no expression given to try() succeeded; the last error: ${last!.message}`);
  }
  if (name === 'can') {
    if (argExprs.length !== 1) throw evalError('can() takes exactly one argument');
    try {
      evaluate(argExprs[0]!, scope);
      return true;
    } catch (err) {
      if (!(err instanceof HclEvalError) || !err.catchable) throw err;
      return false;
    }
  }
  if (name === 'convert') {
    // The second argument is a type (`list(string)`), not a value.
    if (argExprs.length !== 2) throw evalError('convert() takes a value and a type');
    return convertValue(evaluate(argExprs[0]!, scope), typeFromExpr(argExprs[1]!));
  }
  const fn = scope.functions.get(name);
  if (!fn) throw evalError(`call to unknown function "${name}"`);
  let args = argExprs.map((e) => evaluate(e, scope));
  if (expandFinal) {
    const last = args[args.length - 1]!;
    if (!Array.isArray(last)) throw evalError(`the argument expanded with "..." in ${name}() must be a list, got ${typeName(last)}`);
    args = [...args.slice(0, -1), ...last];
  }
  if (args.length < fn.minArgs || args.length > fn.maxArgs) {
    const want = fn.minArgs === fn.maxArgs ? `${fn.minArgs}` : fn.maxArgs === Infinity ? `at least ${fn.minArgs}` : `${fn.minArgs} to ${fn.maxArgs}`;
    throw evalError(`${name}() takes ${want} argument${want === '1' ? '' : 's'}, got ${args.length}`);
  }
  try {
    const result = fn.call(args, scope.budget);
    if (typeof result === 'string') scope.budget.string(result.length);
    else if (Array.isArray(result)) scope.budget.collection(result.length);
    scope.budget.value(result);
    return result;
  } catch (err) {
    if (err instanceof HclEvalError) {
      if (err.message.startsWith(`${name}(`) || !err.catchable) throw err;
      throw new HclEvalError(err.code, `${name}(): ${err.message}`, { cause: err });
    }
    throw err;
  }
}
