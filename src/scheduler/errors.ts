/** Typed errors of the scheduler, matched by `code`, never by message text. */

/** Error codes the scheduler raises. */
export const SchedulerErrorCode = {
  UnknownJobType: 'SCHEDULER_UNKNOWN_JOB_TYPE',
  MaxPlanAttempts: 'SCHEDULER_MAX_PLAN_ATTEMPTS',
  BadEvaluation: 'SCHEDULER_BAD_EVALUATION',
} as const;
export type SchedulerErrorCode = (typeof SchedulerErrorCode)[keyof typeof SchedulerErrorCode];

/** A scheduler failure; `recoverable` tells the worker whether a nack and retry may help. */
export class SchedulerError extends Error {
  constructor(
    readonly code: SchedulerErrorCode,
    message: string,
    readonly recoverable = false,
    override readonly cause?: unknown,
  ) {
    super(message);
    this.name = 'SchedulerError';
  }
}
