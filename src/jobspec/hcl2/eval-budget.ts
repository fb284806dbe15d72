/**
 * The cost bound of evaluating one job file: every node evaluated, element iterated and
 * function call spends steps, and no single value may grow past a size. A file that asks
 * for more (nested `for` over `range()`, `format("%9999999d")`) fails with a Limit error
 * instead of holding a server's CPU or memory.
 */
import { HclEvalError, HclEvalErrorCode } from './hcl-eval-error.js';

/** Limits of one evaluation; the defaults allow every Nomad example file many times over. */
export interface EvalLimits {
  /** Nodes evaluated plus elements produced. */
  maxSteps: number;
  /** Longest string a function or template may produce, in UTF-16 units. */
  maxStringLength: number;
  /** Most elements of one list or map. */
  maxCollectionSize: number;
  /** Wall time all regex matches of one evaluation may take together (JS regexes backtrack). */
  maxRegexMs: number;
}

export const DEFAULT_EVAL_LIMITS: EvalLimits = {
  maxSteps: 2_000_000,
  maxStringLength: 4 * 1024 * 1024,
  maxCollectionSize: 100_000,
  maxRegexMs: 500,
};

/** Counts the work of one job file's evaluation against its limits. */
export class EvalBudget {
  private spent = 0;
  private regexMs = 0;

  constructor(readonly limits: EvalLimits = DEFAULT_EVAL_LIMITS) {}

  /** Spends `n` steps; throws a Limit error when the budget is gone. */
  tick(n = 1): void {
    this.spent += n;
    if (this.spent > this.limits.maxSteps) {
      throw new HclEvalError(HclEvalErrorCode.Limit, `evaluation exceeded its budget of ${this.limits.maxSteps} steps`);
    }
  }

  /** Throws when a string of `length` would be too long. */
  string(length: number): void {
    if (length > this.limits.maxStringLength) {
      throw new HclEvalError(HclEvalErrorCode.Limit, `a string of ${length} characters exceeds the limit of ${this.limits.maxStringLength}`);
    }
  }

  /** Throws when a collection of `size` elements would be too large; spends a step each. */
  collection(size: number): void {
    if (size > this.limits.maxCollectionSize) {
      throw new HclEvalError(HclEvalErrorCode.Limit, `a collection of ${size} elements exceeds the limit of ${this.limits.maxCollectionSize}`);
    }
    this.tick(size);
  }

  /** Milliseconds of regex matching left. */
  regexTimeLeft(): number {
    return this.limits.maxRegexMs - this.regexMs;
  }

  /** Records time spent matching a regex. */
  spendRegexTime(ms: number): void {
    this.regexMs += ms;
  }
}
