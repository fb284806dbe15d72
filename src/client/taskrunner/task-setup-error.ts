/**
 * The error a prestart hook throws when the task cannot be set up and retrying cannot help
 * (a template using an unsupported function, an artifact that cannot be fetched). The task
 * runner records it as a "Setup Failure" event carrying the message, and the task fails.
 */

/** A permanent task setup failure; the message is shown as the event's SetupError. */
export class TaskSetupError extends Error {
  readonly code = 'TASK_SETUP_FAILED';
  readonly recoverable = false;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'TaskSetupError';
  }
}
