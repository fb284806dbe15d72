/** The shorthand every function module uses to declare a function's arity and body. */
import type { HclValue } from '../expression-ast.js';
import type { EvalBudget } from '../eval-budget.js';
import type { HclFunction } from '../expression-evaluator.js';

/** A function taking `min`..`max` arguments (max defaults to min; Infinity for variadic). */
export function defineFunction(min: number, max: number | undefined, call: (args: HclValue[], budget: EvalBudget) => HclValue): HclFunction {
  return { minArgs: min, maxArgs: max ?? min, call };
}
