/** Evaluates one HCL2 expression or template for the jobspec2 unit tests. */
import type { HclValue } from '../../src/jobspec/hcl2/expression-ast.js';
import { EvalScope, evaluate } from '../../src/jobspec/hcl2/expression-evaluator.js';
import { parseExpression, parseTemplateExpr } from '../../src/jobspec/hcl2/expression-parser.js';
import { EvalBudget, type EvalLimits, DEFAULT_EVAL_LIMITS } from '../../src/jobspec/hcl2/eval-budget.js';
import { jobspecFunctions } from '../../src/jobspec/hcl2/function-table.js';

export interface EvalOptions {
  vars?: Record<string, HclValue>;
  baseDir?: string;
  limits?: Partial<EvalLimits>;
}

function scope(opts: EvalOptions): EvalScope {
  const names = new Map<string, HclValue>([['var', opts.vars ?? {}]]);
  const files = opts.baseDir !== undefined ? { allow: true, baseDir: opts.baseDir } : { allow: false, baseDir: '.' };
  return new EvalScope(names, jobspecFunctions(files), new EvalBudget({ ...DEFAULT_EVAL_LIMITS, ...opts.limits }));
}

/** The value of an expression (the text inside `${…}`). */
export function ev(src: string, opts: EvalOptions = {}): HclValue {
  return evaluate(parseExpression(src), scope(opts));
}

/** The value of template text, as hcl2json hands a string over. */
export function tmpl(src: string, opts: EvalOptions = {}): HclValue {
  return evaluate(parseTemplateExpr(src), scope(opts));
}
