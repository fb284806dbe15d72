/**
 * The error a prestart hook throws when the task cannot be set up and retrying cannot help
 * (a template using an unsupported function, an artifact that cannot be fetched). The task
 * runner records it as a "Setup Failure" event carrying the message, and the task fails.
 */
import { CaravanError, type CaravanErrorOptions } from '../../structs/caravan-error.js';

/** A permanent task setup failure; the message is shown as the event's SetupError. */
export class TaskSetupError extends CaravanError<'TASK_SETUP_FAILED'> {
  constructor(reason: string, options?: CaravanErrorOptions) {
    super('TASK_SETUP_FAILED', { reason }, options);
    this.name = 'TaskSetupError';
  }
}
