/**
 * Errors of the HTTP layer: every failure becomes the status the error catalogue gives its code
 * and a plain-text body, as Nomad answers. Routes throw HttpError, or let a CaravanError from the
 * server core or the client through; the fastify error handler turns anything else into a 500
 * without crashing the process. No status is chosen here: each comes from the catalogue.
 */
import { CaravanError, type CaravanErrorOptions } from '../structs/caravan-error.js';
import type { ErrorCode, ErrorFields } from '../structs/error-catalogue.js';

/** An error raised by the HTTP layer itself; status and message come from its code. */
export class HttpError<C extends ErrorCode = ErrorCode> extends CaravanError<C> {
  constructor(code: C, fields: ErrorFields<C>, options?: CaravanErrorOptions) {
    super(code, fields, options);
    this.name = 'HttpError';
  }
}

/** A 400 whose message names the offending field or parameter. */
export function badRequest(reason: string): HttpError<'HTTP_BAD_REQUEST'> {
  return new HttpError('HTTP_BAD_REQUEST', { reason });
}

/** A 404 such as "job not found" (Nomad's text, which its clients match). */
export function notFound(what: string): HttpError<'HTTP_NOT_FOUND'> {
  return new HttpError('HTTP_NOT_FOUND', { what });
}

/** A 405 for a route that exists with other methods (Nomad's text). */
export function methodNotAllowed(method: string, path: string): HttpError<'HTTP_METHOD_NOT_ALLOWED'> {
  return new HttpError('HTTP_METHOD_NOT_ALLOWED', { method, path });
}

interface FastifyLikeError {
  statusCode?: number;
  code?: string;
  message?: string;
}

/**
 * Maps any thrown value to a CaravanError: CaravanErrors as they are, fastify's own errors
 * (body too large, bad content type, unparsable body) to their catalogue codes, anything else
 * to HTTP_INTERNAL (500).
 */
export function toCaravanError(err: unknown): CaravanError {
  if (err instanceof CaravanError) return err;
  if (typeof err === 'object' && err !== null) {
    const e = err as FastifyLikeError;
    const reason = e.message ?? 'bad request';
    if (e.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return new HttpError('HTTP_BODY_TOO_LARGE', {}, { cause: err });
    if (e.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return new HttpError('HTTP_UNSUPPORTED_MEDIA_TYPE', { reason }, { cause: err });
    if (typeof e.statusCode === 'number' && e.statusCode >= 400 && e.statusCode < 500) return new HttpError('HTTP_BAD_REQUEST', { reason }, { cause: err });
  }
  const reason = err instanceof Error ? err.message : String(err);
  return new HttpError('HTTP_INTERNAL', { reason }, { cause: err });
}
