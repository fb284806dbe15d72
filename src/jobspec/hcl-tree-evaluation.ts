/**
 * Evaluates every expression of a job file's hcl2json tree, as Nomad's jobspec2 does before
 * decoding: `locals` (in any order, referencing each other), `var.*`, functions, templates,
 * and `dynamic` blocks expanded into the blocks they generate. Runtime references
 * (`${NOMAD_*}`, `${attr.*}`, `${node.*}`, `${meta.*}`, `${env[…]}`) stay as text for the client.
 * Problems are reported to the DecodeContext with the path of the value; one bad expression
 * does not stop the others from being checked.
 */
import type { DecodeContext } from './decode-context.js';
import type { HclValue } from './hcl2/expression-ast.js';
import { EvalScope, evaluate, type LazyNamespace } from './hcl2/expression-evaluator.js';
import { parseTemplateExpr } from './hcl2/expression-parser.js';
import { EvalBudget } from './hcl2/eval-budget.js';
import { asEvalError, evalError, HclEvalError, HclEvalErrorCode } from './hcl2/hcl-eval-error.js';
import { isHclObject, setKey, sortedKeys, toStr, type HclObject } from './hcl2/hcl-value.js';
import { jobspecFunctions } from './hcl2/function-table.js';
import type { FileAccess } from './hcl2/functions/file-functions.js';

type Raw = Record<string, unknown>;

function isRaw(v: unknown): v is Raw {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Blocks whose hcl2json form is `{type: {label: [body]}}`, for readable paths. */
const LABELLED = new Set(['job', 'group', 'task', 'variable', 'port', 'volume', 'action', 'dynamic']);

/** Longest chain of locals each referring to the next. */
const MAX_LOCAL_CHAIN = 256;

/** Thrown where a value depends on one already reported, so it is not reported twice. */
class AlreadyReported extends HclEvalError {
  constructor(what: string) {
    super(HclEvalErrorCode.Eval, `${what} has errors`);
  }
}

/** Options of one tree evaluation. */
export interface TreeEvaluationOptions {
  files: FileAccess;
  budget?: EvalBudget;
}

/** The evaluation of one tree: its scope, its context and how it reports. */
export class TreeEvaluator {
  readonly root: EvalScope;

  constructor(
    private readonly ctx: DecodeContext,
    vars: ReadonlyMap<string, unknown>,
    localSources: ReadonlyMap<string, unknown>,
    opts: TreeEvaluationOptions,
  ) {
    const budget = opts.budget ?? new EvalBudget();
    const names = new Map<string, HclValue | LazyNamespace>();
    names.set('var', variableNamespace(vars));
    names.set('local', this.localNamespace(localSources));
    this.root = new EvalScope(names, jobspecFunctions(opts.files), budget);
  }

  private localNamespace(sources: ReadonlyMap<string, unknown>): LazyNamespace {
    const done = new Map<string, HclValue>();
    const failed = new Set<string>();
    const active = new Set<string>();
    const ns: LazyNamespace = {
      lazy: true,
      get: (name) => {
        const have = done.get(name);
        if (have !== undefined) return have;
        if (failed.has(name)) throw new AlreadyReported(`local.${name}`);
        if (!sources.has(name)) throw Object.assign(evalError(`reference to undeclared local "local.${name}"`), { locate: `local.${name}` });
        if (active.has(name)) throw evalError(`local.${name} refers to itself (through ${[...active].map((n) => `local.${n}`).join(' → ')})`);
        // Each link of a chain of locals is a level of recursion here.
        if (active.size >= MAX_LOCAL_CHAIN) throw new HclEvalError(HclEvalErrorCode.Limit, `locals refer to each other more than ${MAX_LOCAL_CHAIN} deep`);
        active.add(name);
        try {
          const v = this.value(sources.get(name), this.root, `locals: ${name}`, true);
          done.set(name, v);
          return v;
        } catch (err) {
          failed.add(name);
          throw err;
        } finally {
          active.delete(name);
        }
      },
      all: () => {
        const out: HclObject = {};
        for (const name of sources.keys()) setKey(out, name, ns.get(name));
        return out;
      },
    };
    return ns;
  }

  /** Evaluates every local now, so each one's errors are reported once, at the local. */
  evaluateLocals(names: Iterable<string>): void {
    const ns = this.root.binding('local') as LazyNamespace;
    for (const name of names) {
      try {
        ns.get(name);
      } catch (err) {
        this.report(err, `locals: ${name}`);
      }
    }
  }

  /** Records an evaluation error (a Limit error stops the whole evaluation). */
  report(thrown: unknown, path: string, text?: string): void {
    if (thrown instanceof AlreadyReported) return;
    const err = asEvalError(thrown);
    const locate = (err as { locate?: string }).locate ?? inner(text);
    this.ctx.report(path, err.message, locate, 0, true);
    if (err.code === HclEvalErrorCode.Limit) throw err;
  }

  /**
   * Evaluates one raw value (string, list, map or block body). With `rethrow`, the first
   * error propagates (locals); otherwise errors are reported and the value is left as is.
   */
  value(raw: unknown, scope: EvalScope, path: string, rethrow = false): HclValue {
    if (typeof raw === 'string') {
      if (!raw.includes('${') && !raw.includes('%{')) return raw;
      try {
        return evaluate(parseTemplateExpr(raw), scope);
      } catch (err) {
        if (rethrow) throw err;
        this.report(err, path, raw);
        return raw;
      }
    }
    if (Array.isArray(raw)) return raw.map((x) => this.value(x, scope, path, rethrow));
    if (isRaw(raw)) return this.body(raw, scope, path, rethrow);
    return raw as HclValue;
  }

  private body(raw: Raw, scope: EvalScope, path: string, rethrow: boolean): HclObject {
    const out: HclObject = {};
    for (const [key, v] of Object.entries(raw)) {
      if (key === 'dynamic' && isRaw(v) && looksDynamic(v)) {
        this.expandDynamic(v, out, scope, path, rethrow);
        continue;
      }
      const k = key.includes('${') ? toStr(this.value(key, scope, path, rethrow), 'key') : key;
      const childPath = LABELLED.has(k) && isRaw(v) ? path : join(path, k);
      if (LABELLED.has(k) && isRaw(v)) {
        const labelled: HclObject = {};
        for (const [label, bodies] of Object.entries(v)) setKey(labelled, label, this.value(bodies, scope, join(path, `${k} "${label}"`), rethrow));
        merge(out, k, labelled);
      } else {
        merge(out, k, this.value(v, scope, childPath, rethrow));
      }
    }
    return out;
  }

  /** `dynamic "type" { for_each, iterator, labels, content {…} }` → generated `type` blocks. */
  private expandDynamic(spec: Raw, out: HclObject, scope: EvalScope, path: string, rethrow: boolean): void {
    for (const [type, list] of Object.entries(spec)) {
      const where = join(path, `dynamic "${type}"`);
      for (const d of Array.isArray(list) ? list : [list]) {
        if (!isRaw(d)) continue;
        try {
          for (const key of Object.keys(d)) {
            if (!['for_each', 'iterator', 'labels', 'content'].includes(key)) throw evalError(`unknown attribute "${key}" in a dynamic block`);
          }
          const forEach = this.value(d.for_each, scope, where, true);
          const iterator = typeof d.iterator === 'string' ? d.iterator.replace(/^\$\{\s*|\s*\}$/g, '') : type;
          const contents = Array.isArray(d.content) ? d.content : d.content === undefined ? [] : [d.content];
          if (contents.length !== 1 || !isRaw(contents[0])) throw evalError('a dynamic block needs exactly one content block');
          for (const [k, v] of pairs(forEach)) {
            scope.budget.tick();
            const inner = scope.with({ [iterator]: { key: k, value: v } });
            const block = this.body(contents[0], inner, where, rethrow);
            const labels = d.labels === undefined ? [] : (this.value(d.labels, inner, where, true) as HclValue);
            if (!Array.isArray(labels)) throw evalError('labels must be a list of strings');
            let node: HclValue = [block];
            for (const label of [...labels].reverse()) node = { [toStr(label, 'label')]: node };
            merge(out, type, node);
          }
        } catch (err) {
          if (rethrow) throw err;
          this.report(err, where);
        }
      }
    }
  }
}

/** A `var` namespace that names an undeclared variable the way users search for it. */
function variableNamespace(vars: ReadonlyMap<string, unknown>): LazyNamespace {
  return {
    lazy: true,
    get: (name) => {
      if (!vars.has(name)) throw Object.assign(evalError(`reference to undeclared variable "var.${name}"`), { locate: `var.${name}` });
      return vars.get(name) as HclValue;
    },
    all: () => {
      const out: HclObject = {};
      for (const [k, v] of vars) setKey(out, k, v as HclValue);
      return out;
    },
  };
}

function looksDynamic(v: Raw): boolean {
  return Object.values(v).every((list) => (Array.isArray(list) ? list : [list]).every((d) => isRaw(d) && 'for_each' in d));
}

function pairs(coll: HclValue): [HclValue, HclValue][] {
  if (Array.isArray(coll)) return coll.map((v, i) => [i, v]);
  if (isHclObject(coll)) return sortedKeys(coll).map((k) => [k, coll[k]!]);
  throw evalError('for_each must be a list, set or map');
}

/** Adds a key to a body, joining repeated blocks as hcl2json would have. */
function merge(out: HclObject, key: string, value: HclValue): void {
  if (!Object.prototype.hasOwnProperty.call(out, key)) {
    setKey(out, key, value);
    return;
  }
  const have = out[key]!;
  if (Array.isArray(have) && Array.isArray(value)) {
    out[key] = [...have, ...value];
  } else if (isHclObject(have) && isHclObject(value)) {
    for (const [k, v] of Object.entries(value)) merge(have, k, v);
  } else {
    setKey(out, key, value);
  }
}

function join(path: string, segment: string): string {
  return path ? `${path}: ${segment}` : segment;
}

/** The text inside a `${…}`, to find the line of an expression in the source. */
function inner(text: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  const m = /\$\{\s*([^}]{1,60})/.exec(text);
  return m ? m[1]!.trim() : undefined;
}

/**
 * Returns the tree with every expression evaluated and dynamic blocks expanded; `variable`,
 * `variables` and `locals` are dropped after use. Locals may be declared in any order.
 */
export function evaluateJobTree(tree: Raw, vars: ReadonlyMap<string, unknown>, ctx: DecodeContext, opts: TreeEvaluationOptions): Raw {
  const localSources = new Map<string, unknown>();
  const localBlocks = Array.isArray(tree.locals) ? tree.locals : tree.locals !== undefined ? [tree.locals] : [];
  for (const block of localBlocks) {
    if (!isRaw(block)) continue;
    for (const [k, v] of Object.entries(block)) {
      if (localSources.has(k)) ctx.report('locals', `duplicate local "${k}": each local may be defined once`, k);
      localSources.set(k, v);
    }
  }
  const ev = new TreeEvaluator(ctx, vars, localSources, opts);
  const out: Raw = {};
  try {
    ev.evaluateLocals(localSources.keys());
    for (const [k, v] of Object.entries(tree)) {
      if (k === 'variable' || k === 'variables' || k === 'locals') {
        out[k] = v;
        continue;
      }
      const wrapped = ev.value({ [k]: v }, ev.root, '') as HclObject;
      out[k] = wrapped[k];
      // The whole job, shared parts counted each time they appear: what decoding will copy.
      try {
        ev.root.budget.value(wrapped);
      } catch (err) {
        ev.report(err, k);
      }
    }
  } catch (err) {
    // A Limit error was reported where it happened; nothing more is evaluated.
    if (asEvalError(err).code !== HclEvalErrorCode.Limit) throw err;
  }
  return out;
}
