/**
 * Errors of HCL2 expression parsing and evaluation. `try()`/`can()` catch the catchable
 * ones (a bad value, a missing key); a blown evaluation budget is never catchable, so a
 * hostile file cannot hide its cost behind `can(...)`.
 */
import { CaravanError } from '../../structs/caravan-error.js';

/** What went wrong, matched by code rather than message text. */
export const HclEvalErrorCode = {
  /** The expression text is not valid HCL2. */
  Syntax: 'HCL_SYNTAX',
  /** A value, argument or reference is wrong (try/can catch it). */
  Eval: 'HCL_EVAL',
  /** A filesystem function was called where files may not be read, or outside the job's directory. */
  FileAccess: 'HCL_FILE_ACCESS',
  /** The evaluation exceeded its budget (steps, depth, size, time). */
  Limit: 'HCL_LIMIT',
} as const;
export type HclEvalErrorCode = (typeof HclEvalErrorCode)[keyof typeof HclEvalErrorCode];

/** One failed parse or evaluation of an HCL2 expression. */
export class HclEvalError extends CaravanError<HclEvalErrorCode> {
  constructor(code: HclEvalErrorCode, message: string, options?: { cause?: unknown }) {
    super(code, { reason: message }, options);
    this.name = 'HclEvalError';
  }

  /** try() and can() may swallow this error (a blown budget they may not). */
  get catchable(): boolean {
    return this.code === HclEvalErrorCode.Eval || this.code === HclEvalErrorCode.FileAccess;
  }
}

/** Shorthand for a recoverable evaluation error. */
export function evalError(message: string): HclEvalError {
  return new HclEvalError(HclEvalErrorCode.Eval, message);
}

/**
 * The error to report for `err` thrown by an evaluation: an exhausted stack (a RangeError
 * from a value nested deeper than any bound caught) becomes a Limit error instead of escaping
 * as a crash; anything else that is not an HclEvalError is rethrown as a bug.
 */
export function asEvalError(err: unknown): HclEvalError {
  if (err instanceof HclEvalError) return err;
  if (err instanceof RangeError) return new HclEvalError(HclEvalErrorCode.Limit, `evaluation nested too deeply: ${err.message}`, { cause: err });
  throw err;
}
