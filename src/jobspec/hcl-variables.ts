/**
 * HCL2 input variables of a job file: `variable "name" { type default description sensitive
 * nullable validation {…} }` blocks and the older `variables { name = default }` block. A
 * value comes from `-var` over `-var-file` over `NOMAD_VAR_<name>` over `default`, is converted to the declared
 * `type`, and must pass every `validation` condition.
 */
import type { DecodeContext } from './decode-context.js';
import type { HclValue } from './hcl2/expression-ast.js';
import { EvalScope, evaluate, type LazyNamespace } from './hcl2/expression-evaluator.js';
import { parseExpression, parseTemplateExpr } from './hcl2/expression-parser.js';
import { EvalBudget } from './hcl2/eval-budget.js';
import { asEvalError, evalError, HclEvalError } from './hcl2/hcl-eval-error.js';
import { toBool, toStr } from './hcl2/hcl-value.js';
import { jobspecFunctions } from './hcl2/function-table.js';
import { convertValue, isCollectionType, typeFromExpr, type TypeConstraint } from './hcl2/type-constraint.js';

/** Values given from outside the file: `-var k=v` (strings) and `-var-file` contents. */
export interface VariableInputs {
  /** `-var` flags, later wins; values are strings converted by the variable's type. */
  cli: Record<string, string>;
  /** Merged contents of `-var-file` files (HCL or JSON), later files win. */
  files: Record<string, unknown>;
  /** `NOMAD_VAR_<name>` environment values (strings, as -var); below files, above defaults. */
  env?: Record<string, string>;
}

type Raw = Record<string, unknown>;

function isObject(v: unknown): v is Raw {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

const VARIABLE_KEYS = ['default', 'type', 'description', 'sensitive', 'nullable', 'validation'];

/** A scope with functions but no names: defaults and inputs may not reference anything. */
function constantScope(): EvalScope {
  return new EvalScope(new Map(), jobspecFunctions({ allow: false, baseDir: '.' }), new EvalBudget());
}

/** Evaluates a constant hcl2json value (a default, a var-file value). */
function constantValue(raw: unknown, scope: EvalScope): HclValue {
  if (typeof raw === 'string') return raw.includes('${') || raw.includes('%{') ? evaluate(parseTemplateExpr(raw), scope) : raw;
  if (Array.isArray(raw)) return raw.map((x) => constantValue(x, scope));
  if (isObject(raw)) return Object.fromEntries(Object.entries(raw).map(([k, v]) => [k, constantValue(v, scope)]));
  return raw as HclValue;
}

function typeOf(name: string, body: Raw, ctx: DecodeContext): TypeConstraint | undefined {
  if (typeof body.type !== 'string') return undefined;
  try {
    return typeFromExpr(parseExpression(body.type.replace(/^\$\{|\}$/g, '')));
  } catch (err) {
    if (!(err instanceof HclEvalError)) throw err;
    ctx.report(`variable "${name}"`, `invalid type: ${err.message}`, 'type', ctx.offsetOf('variable', 0, name));
    return undefined;
  }
}

/** Converts a `-var` string to the declared type; collections are written as HCL or JSON. */
function convertCliValue(name: string, value: string, type: TypeConstraint | undefined, ctx: DecodeContext, scope: EvalScope): unknown {
  if (type === undefined || type.kind === 'string' || type.kind === 'any') return value;
  if (type.kind === 'number') {
    const n = Number(value);
    if (value.trim() === '' || !Number.isFinite(n)) {
      ctx.report(`variable "${name}"`, `value ${JSON.stringify(value)} is not a number`);
      return value;
    }
    return n;
  }
  if (type.kind === 'bool') {
    if (value === 'true' || value === 'false') return value === 'true';
    ctx.report(`variable "${name}"`, `value ${JSON.stringify(value)} is not a bool`);
    return value;
  }
  if (isCollectionType(type)) {
    try {
      return evaluate(parseExpression(value), scope);
    } catch {
      ctx.report(`variable "${name}"`, `value ${JSON.stringify(value)} is not valid for type ${type.kind} (write it as HCL or JSON)`);
      return value;
    }
  }
  return value;
}

/** Declared variables: `variable "x" {…}` blocks and `variables { x = … }` attributes. */
function declarations(tree: Raw): Map<string, Raw> {
  const out = new Map<string, Raw>();
  if (isObject(tree.variable)) {
    for (const [name, bodies] of Object.entries(tree.variable)) {
      out.set(name, Array.isArray(bodies) && isObject(bodies[0]) ? bodies[0] : {});
    }
  }
  const plural = Array.isArray(tree.variables) ? tree.variables : tree.variables !== undefined ? [tree.variables] : [];
  for (const block of plural) {
    if (!isObject(block)) continue;
    for (const [name, def] of Object.entries(block)) out.set(name, { default: def });
  }
  return out;
}

/**
 * Resolves the value of every declared variable: `-var` over `-var-file` over `NOMAD_VAR_<name>` over `default`,
 * converted to its type and checked by its validations. Reports undeclared inputs,
 * variables left without a value and failed validations.
 */
export function resolveVariables(tree: Raw, inputs: VariableInputs, ctx: DecodeContext): Map<string, unknown> {
  const values = new Map<string, unknown>();
  const declared = declarations(tree);
  const scope = constantScope();
  const validations: [string, Raw[]][] = [];
  for (const [name, body] of declared) {
    const where = `variable "${name}"`;
    const at = ctx.offsetOf('variable', 0, name);
    for (const key of Object.keys(body)) {
      if (!VARIABLE_KEYS.includes(key)) ctx.report(where, `unknown attribute "${key}"`, key, at);
    }
    const type = typeOf(name, body, ctx);
    let value: unknown;
    try {
      if (Object.prototype.hasOwnProperty.call(inputs.cli, name)) {
        value = convertCliValue(name, inputs.cli[name]!, type, ctx, scope);
      } else if (Object.prototype.hasOwnProperty.call(inputs.files, name)) {
        value = constantValue(inputs.files[name], scope);
      } else if (inputs.env && Object.prototype.hasOwnProperty.call(inputs.env, name)) {
        value = convertCliValue(name, inputs.env[name]!, type, ctx, scope);
      } else if (Object.prototype.hasOwnProperty.call(body, 'default')) {
        value = constantValue(body.default, scope);
      } else {
        ctx.report(where, 'no value given: set a default, -var or -var-file', 'variable');
        continue;
      }
      if (type !== undefined) value = convertValue(value as HclValue, type, 'value');
      if (value === null && body.nullable === false) ctx.report(where, 'value must not be null (nullable = false)', 'nullable', at);
    } catch (err) {
      ctx.report(where, asEvalError(err).message, 'default', at);
      continue;
    }
    values.set(name, value);
    const v = body.validation;
    if (v !== undefined) validations.push([name, (Array.isArray(v) ? v : [v]).filter(isObject)]);
  }
  for (const name of [...Object.keys(inputs.cli), ...Object.keys(inputs.files)]) {
    if (!declared.has(name)) {
      ctx.report('', `undeclared variable "${name}" given as input: declare it with variable "${name}" {}`);
    }
  }
  for (const [name, rules] of validations) validate(name, rules, values, ctx);
  return values;
}

/** Runs a variable's `validation { condition error_message }` blocks. */
function validate(name: string, rules: Raw[], values: Map<string, unknown>, ctx: DecodeContext): void {
  const where = `variable "${name}"`;
  const varNs: LazyNamespace = {
    lazy: true,
    get: (n) => {
      if (n !== name) throw evalError(`a validation of var.${name} may only refer to var.${name}, not var.${n}`);
      return values.get(n) as HclValue;
    },
    all: () => ({ [name]: values.get(name) as HclValue }),
  };
  const scope = new EvalScope(new Map([['var', varNs]]), jobspecFunctions({ allow: false, baseDir: '.' }), new EvalBudget());
  for (const rule of rules) {
    for (const key of Object.keys(rule)) {
      if (key !== 'condition' && key !== 'error_message') ctx.report(where, `validation: unknown attribute "${key}"`, key);
    }
    if (rule.condition === undefined) {
      ctx.report(where, 'validation: "condition" is required', 'validation');
      continue;
    }
    try {
      const ok = toBool(constantValue(rule.condition, scope), 'validation condition');
      if (!ok) {
        const message = rule.error_message === undefined ? `invalid value for variable "${name}"` : toStr(constantValue(rule.error_message, scope), 'error_message');
        ctx.report(where, `invalid value: ${message}`, 'condition', ctx.offsetOf('variable', 0, name));
      }
    } catch (err) {
      ctx.report(where, `validation: ${asEvalError(err).message}`, 'condition', ctx.offsetOf('variable', 0, name));
    }
  }
}
