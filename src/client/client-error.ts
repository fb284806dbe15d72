/** Typed errors of the client, matched by `code`, never by message text. */
import { CaravanError, type CaravanErrorOptions } from '../structs/caravan-error.js';

export const ClientErrorCode = {
  HookFailed: 'CLIENT_HOOK_FAILED',
  BadTask: 'CLIENT_BAD_TASK',
  NoDriver: 'CLIENT_NO_DRIVER',
  StateDb: 'CLIENT_STATE_DB',
  ServerUnreachable: 'CLIENT_SERVER_UNREACHABLE',
  NoServers: 'CLIENT_NO_SERVERS',
  ServerRejected: 'CLIENT_SERVER_REJECTED',
  NodeUnknown: 'CLIENT_NODE_UNKNOWN',
  TaskNotRunning: 'CLIENT_TASK_NOT_RUNNING',
  HostVolumeInvalid: 'CLIENT_HOST_VOLUME_INVALID',
  OptionInvalid: 'CLIENT_OPTION_INVALID',
} as const;
export type ClientErrorCode = (typeof ClientErrorCode)[keyof typeof ClientErrorCode];

/** An error raised by the client; `recoverable` tells the restart tracker whether retrying may help. */
export class ClientError extends CaravanError<ClientErrorCode> {
  constructor(code: ClientErrorCode, reason: string, options?: CaravanErrorOptions) {
    super(code, { reason }, options);
    this.name = 'ClientError';
  }
}

/** Whether an error may go away on retry (errors without the flag are assumed recoverable). */
export function isRecoverable(err: unknown): boolean {
  if (err && typeof err === 'object' && 'recoverable' in err) return Boolean((err as { recoverable: unknown }).recoverable);
  return true;
}

/** The message of any thrown value. */
export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
