/**
 * HCL2 input variables and locals of a job file. hcl2json leaves every expression as a
 * `${…}` string; this module substitutes `var.NAME` and `local.NAME` references and un-escapes
 * `$${` / `%%{`. Any other `${…}` (e.g. `${NOMAD_TASK_NAME}`, `${attr.kernel.name}`) stays
 * literal for runtime interpolation, as Nomad's own jobspec parser leaves it.
 */
import type { DecodeContext } from './decode-context.js';

/** Values given from outside the file: `-var k=v` (strings) and `-var-file` contents. */
export interface VariableInputs {
  /** `-var` flags, later wins; values are strings converted by the variable's type. */
  cli: Record<string, string>;
  /** Merged contents of `-var-file` files (HCL or JSON), later files win. */
  files: Record<string, unknown>;
}

type Raw = Record<string, unknown>;

function isObject(v: unknown): v is Raw {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Converts a `-var` string to the declared type (`number`, `bool`, `list(...)`, `map(...)`). */
function convertCliValue(name: string, value: string, type: string | undefined, ctx: DecodeContext): unknown {
  const t = (type ?? '').replace(/^\$\{|\}$/g, '').trim();
  if (t === 'number') {
    const n = Number(value);
    if (value.trim() === '' || !Number.isFinite(n)) {
      ctx.report(`variable "${name}"`, `value ${JSON.stringify(value)} is not a number`);
      return value;
    }
    return n;
  }
  if (t === 'bool') {
    if (value === 'true' || value === 'false') return value === 'true';
    ctx.report(`variable "${name}"`, `value ${JSON.stringify(value)} is not a bool`);
    return value;
  }
  if (/^(list|set|tuple|map|object)\b/.test(t)) {
    try {
      return JSON.parse(value) as unknown;
    } catch {
      ctx.report(`variable "${name}"`, `value ${JSON.stringify(value)} is not valid for type ${t} (give it as JSON)`);
      return value;
    }
  }
  return value;
}

/**
 * Resolves the value of every declared variable: `-var` over `-var-file` over `default`.
 * Reports undeclared inputs and variables left without a value.
 */
export function resolveVariables(tree: Raw, inputs: VariableInputs, ctx: DecodeContext): Map<string, unknown> {
  const values = new Map<string, unknown>();
  const declared = isObject(tree.variable) ? tree.variable : {};
  for (const [name, bodies] of Object.entries(declared)) {
    const body = Array.isArray(bodies) && isObject(bodies[0]) ? bodies[0] : {};
    for (const key of Object.keys(body)) {
      if (!['default', 'type', 'description', 'sensitive', 'nullable', 'validation'].includes(key)) {
        ctx.report(`variable "${name}"`, `unknown attribute "${key}"`, key, ctx.offsetOf('variable', 0, name));
      }
    }
    const type = typeof body.type === 'string' ? body.type : undefined;
    if (Object.prototype.hasOwnProperty.call(inputs.cli, name)) {
      values.set(name, convertCliValue(name, inputs.cli[name]!, type, ctx));
    } else if (Object.prototype.hasOwnProperty.call(inputs.files, name)) {
      values.set(name, inputs.files[name]);
    } else if (Object.prototype.hasOwnProperty.call(body, 'default')) {
      values.set(name, body.default);
    } else {
      ctx.report(`variable "${name}"`, 'no value given: set a default, -var or -var-file', 'variable');
    }
  }
  for (const name of [...Object.keys(inputs.cli), ...Object.keys(inputs.files)]) {
    if (!Object.prototype.hasOwnProperty.call(declared, name)) {
      ctx.report('', `undeclared variable "${name}" given as input: declare it with variable "${name}" {}`);
    }
  }
  return values;
}

const REF = /\$\$\{|%%\{|\$\{\s*([^}]*?)\s*\}/g;
const SIMPLE_REF = /^(var|local)\.([A-Za-z_][\w-]*)$/;

function stringify(v: unknown): string {
  return typeof v === 'string' ? v : JSON.stringify(v);
}

/** The scope references are resolved against. */
interface Scope {
  vars: Map<string, unknown>;
  locals: Map<string, unknown>;
}

function substituteString(s: string, scope: Scope, ctx: DecodeContext, path: string): unknown {
  const whole = /^\$\{\s*([^}]*?)\s*\}$/.exec(s);
  if (whole) {
    const m = SIMPLE_REF.exec(whole[1]!);
    if (m) return lookup(m[1]!, m[2]!, scope, ctx, path);
  }
  return s.replace(REF, (match: string, expr: string | undefined) => {
    if (match === '$${') return '${';
    if (match === '%%{') return '%{';
    const m = SIMPLE_REF.exec(expr ?? '');
    if (m) return stringify(lookup(m[1]!, m[2]!, scope, ctx, path));
    if (/\b(var|local)\./.test(expr ?? '')) {
      ctx.report(path, `unsupported expression "${match}": only plain var.NAME and local.NAME references are supported`, expr, 0, true);
    }
    return match;
  });
}

function lookup(kind: string, name: string, scope: Scope, ctx: DecodeContext, path: string): unknown {
  const table = kind === 'var' ? scope.vars : scope.locals;
  if (table.has(name)) return table.get(name);
  ctx.report(path, `reference to undeclared ${kind === 'var' ? 'variable' : 'local'} "${kind}.${name}"`, `${kind}.${name}`, 0, true);
  return `\${${kind}.${name}}`;
}

function substitute(v: unknown, scope: Scope, ctx: DecodeContext, path: string): unknown {
  if (typeof v === 'string') return substituteString(v, scope, ctx, path);
  if (Array.isArray(v)) return v.map((x) => substitute(x, scope, ctx, path));
  if (isObject(v)) {
    const out: Raw = {};
    for (const [k, x] of Object.entries(v)) out[k] = substitute(x, scope, ctx, path);
    return out;
  }
  return v;
}

/**
 * Returns the tree with `var.*`/`local.*` references substituted and escapes removed.
 * Locals are evaluated in file order and may use variables and earlier locals.
 */
export function resolveReferences(tree: Raw, vars: Map<string, unknown>, ctx: DecodeContext): Raw {
  const scope: Scope = { vars, locals: new Map() };
  const localBlocks = Array.isArray(tree.locals) ? tree.locals : tree.locals !== undefined ? [tree.locals] : [];
  for (const block of localBlocks) {
    if (!isObject(block)) continue;
    for (const [k, v] of Object.entries(block)) scope.locals.set(k, substitute(v, scope, ctx, `locals: ${k}`));
  }
  const out: Raw = {};
  for (const [k, v] of Object.entries(tree)) {
    out[k] = k === 'variable' || k === 'locals' ? v : substitute(v, scope, ctx, k === 'job' ? '' : k);
  }
  return out;
}
