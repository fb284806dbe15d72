/**
 * Errors of HCL2 expression parsing and evaluation. `try()`/`can()` catch the recoverable
 * ones (a bad value, a missing key); a blown evaluation budget is never recoverable, so a
 * hostile file cannot hide its cost behind `can(...)`.
 */

/** What went wrong, matched by code rather than message text. */
export const HclEvalErrorCode = {
  /** The expression text is not valid HCL2. */
  Syntax: 'HCL_SYNTAX',
  /** A value, argument or reference is wrong (recoverable by try/can). */
  Eval: 'HCL_EVAL',
  /** A filesystem function was called where files may not be read, or outside the job's directory. */
  FileAccess: 'HCL_FILE_ACCESS',
  /** The evaluation exceeded its budget (steps, depth, size, time). */
  Limit: 'HCL_LIMIT',
} as const;
export type HclEvalErrorCode = (typeof HclEvalErrorCode)[keyof typeof HclEvalErrorCode];

/** One failed parse or evaluation of an HCL2 expression. */
export class HclEvalError extends Error {
  override readonly name = 'HclEvalError';

  constructor(
    readonly code: HclEvalErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }

  /** try() and can() may swallow this error. */
  get recoverable(): boolean {
    return this.code === HclEvalErrorCode.Eval || this.code === HclEvalErrorCode.FileAccess;
  }
}

/** Shorthand for a recoverable evaluation error. */
export function evalError(message: string): HclEvalError {
  return new HclEvalError(HclEvalErrorCode.Eval, message);
}
