/**
 * The errors a ClientHttpApi implementation (client-http-api.ts) throws. Kept apart from the
 * interface so that client modules raising them do not depend on what the interface imports.
 */
import { CaravanError, type CaravanErrorOptions } from '../structs/caravan-error.js';

/** Codes of the errors a ClientHttpApi implementation throws (statuses in the error catalogue). */
export const ClientApiErrorCode = {
  AllocNotFound: 'CLIENT_ALLOC_NOT_FOUND',
  TaskNotFound: 'CLIENT_TASK_NOT_FOUND',
  TaskNotRunning: 'CLIENT_TASK_NOT_RUNNING',
  BadSignal: 'CLIENT_BAD_SIGNAL',
  NotTerminal: 'CLIENT_ALLOC_NOT_TERMINAL',
  MetaInvalid: 'CLIENT_META_INVALID',
  ActionNotFound: 'CLIENT_ACTION_NOT_FOUND',
  ActionJobMismatch: 'CLIENT_ACTION_JOB_MISMATCH',
} as const;
export type ClientApiErrorCode = (typeof ClientApiErrorCode)[keyof typeof ClientApiErrorCode];

/** A failure of a client operation requested over HTTP; the catalogue gives its status. */
export class ClientApiError extends CaravanError<ClientApiErrorCode> {
  constructor(code: ClientApiErrorCode, reason: string, options?: CaravanErrorOptions) {
    super(code, { reason }, options);
    this.name = 'ClientApiError';
  }
}
