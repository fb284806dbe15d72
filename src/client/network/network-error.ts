/** Typed errors of the group network: set-up failures (a retry may help) and configurations the client cannot provide. */
import { CaravanError, type CaravanErrorOptions } from '../../structs/caravan-error.js';

export const NetworkErrorCode = {
  Setup: 'CLIENT_NETWORK_SETUP',
  Config: 'CLIENT_NETWORK_CONFIG',
} as const;
export type NetworkErrorCode = (typeof NetworkErrorCode)[keyof typeof NetworkErrorCode];

/** A group network failure, naming the mode and the allocation; `recoverable` comes from the catalogue. */
export class NetworkError extends CaravanError<NetworkErrorCode> {
  constructor(code: NetworkErrorCode, fields: { mode: string; alloc: string; reason: string }, options?: CaravanErrorOptions) {
    super(code, fields, options);
    this.name = 'NetworkError';
  }
}
