/**
 * The one base class of Caravan's errors: a `code` from the catalogue (src/structs/error-catalogue.ts),
 * the typed `fields` its message template names, the HTTP `status` and `recoverable` flag the
 * catalogue gives that code, and an optional `cause`. Server, HTTP, client, driver and CLI errors
 * are all CaravanErrors; callers match them by `code`, never by status or message text.
 */
import { ErrorCatalogue, formatErrorMessage, type ErrorCode, type ErrorFields } from './error-catalogue.js';

/** Options of a CaravanError: the error it wraps. */
export interface CaravanErrorOptions {
  cause?: unknown;
}

/** An error whose code, status, message template and recoverability come from the catalogue. */
export class CaravanError<C extends ErrorCode = ErrorCode> extends Error {
  /** The HTTP status an API answer carrying this error has (from the catalogue). */
  readonly status: number;
  /** Whether retrying the same operation unchanged may succeed (from the catalogue). */
  readonly recoverable: boolean;

  constructor(
    readonly code: C,
    readonly fields: ErrorFields<C>,
    options?: CaravanErrorOptions,
  ) {
    super(formatErrorMessage(code, fields), options);
    this.name = 'CaravanError';
    this.status = ErrorCatalogue[code].status;
    this.recoverable = ErrorCatalogue[code].recoverable;
  }
}

/** True when `err` is a CaravanError with code `code` (narrowing its fields). */
export function hasErrorCode<C extends ErrorCode>(err: unknown, code: C): err is CaravanError<C> {
  return err instanceof CaravanError && err.code === code;
}
