/**
 * A ClientHttpApi whose target is set after the HTTP server exists: the client can only start
 * once the API listens (it advertises the real address), but the routes are built first.
 * A Proxy forwards every method, so the interface can grow without touching this file; until
 * bound, every call fails with a 503.
 */
import { CaravanError } from '../structs/caravan-error.js';
import type { ClientHttpApi } from '../http/client-http-api.js';

/** Raised when a client route is used before the client has started. */
export class ClientNotReadyError extends CaravanError<'CLIENT_NOT_READY'> {
  constructor() {
    super('CLIENT_NOT_READY', { reason: 'the client is still starting' });
    this.name = 'ClientNotReadyError';
  }
}

/** A forwarding ClientHttpApi (`api`) and the function that sets where it forwards to. */
export interface LateBoundClient {
  api: ClientHttpApi;
  bind(target: ClientHttpApi): void;
}

/** Creates an unbound forwarding client. */
export function lateBoundClient(): LateBoundClient {
  let target: ClientHttpApi | undefined;
  const api = new Proxy({} as ClientHttpApi, {
    get(_obj, prop) {
      return (...args: unknown[]) => {
        if (!target) throw new ClientNotReadyError();
        const fn = (target as unknown as Record<string | symbol, unknown>)[prop];
        if (typeof fn !== 'function') throw new TypeError(`client has no method ${String(prop)}`);
        return (fn as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { api, bind: (t) => { target = t; } };
}
