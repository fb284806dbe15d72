/**
 * The cost bound of evaluating one job file: every node evaluated, element iterated and
 * function call spends steps, and no single value may grow past a size. A file that asks
 * for more (nested `for` over `range()`, `format("%9999999d")`) fails with a Limit error
 * instead of holding a server's CPU or memory.
 */
import type { HclValue } from './expression-ast.js';
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
  /**
   * Largest value, in characters of its strings plus one per element: values share parts
   * (`[local.x, local.x]`), so a small file could describe a value far larger than memory.
   */
  maxValueWeight: number;
}

export const DEFAULT_EVAL_LIMITS: EvalLimits = {
  maxSteps: 500_000,
  maxStringLength: 4 * 1024 * 1024,
  maxCollectionSize: 100_000,
  maxRegexMs: 500,
  maxValueWeight: 8 * 1024 * 1024,
};

/** Counts the work of one job file's evaluation against its limits. */
export class EvalBudget {
  private spent = 0;
  private regexMs = 0;
  /** Weights of lists and maps already measured (shared parts are measured once). */
  private readonly weights = new WeakMap<object, number>();

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

  /** Throws when `v` would weigh more than the limit (see EvalLimits.maxValueWeight). */
  value(v: HclValue): void {
    const w = this.weigh(v);
    if (w > this.limits.maxValueWeight) {
      throw new HclEvalError(HclEvalErrorCode.Limit, `a value of weight ${w} exceeds the limit of ${this.limits.maxValueWeight} (strings' characters plus elements)`);
    }
  }

  private weigh(v: HclValue): number {
    if (typeof v === 'string') return v.length + 1;
    if (v === null || typeof v !== 'object') return 1;
    const known = this.weights.get(v);
    if (known !== undefined) return known;
    let w = 1;
    for (const x of Array.isArray(v) ? v : Object.values(v)) {
      w += this.weigh(x);
      // Stop measuring once over: the caller only needs to know it is too big.
      if (w > this.limits.maxValueWeight) break;
    }
    this.weights.set(v, w);
    return w;
  }
}
