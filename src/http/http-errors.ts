/**
 * Errors of the HTTP layer: every failure becomes a status code and a plain-text body, as
 * Nomad answers. Routes throw HttpError (or a ServerError from the server core); the fastify
 * error handler turns anything else into a 500 without crashing the process.
 */
import { ConfinementCode, ConfinementError } from '../fs/confined-fs.js';
import { ServerError } from '../server/server-api.js';

/** The status of a refused file path: a path outside the allocation is forbidden, a missing one not found. */
const CONFINEMENT_STATUS: Record<ConfinementCode, number> = {
  CONFINE_BAD_PATH: 400,
  CONFINE_PATH_ESCAPE: 403,
  CONFINE_NOT_FOUND: 404,
  CONFINE_NOT_REGULAR_FILE: 403,
};

/** Machine-readable codes of the errors the HTTP layer raises itself. */
export const HttpErrorCode = {
  BadRequest: 'HTTP_BAD_REQUEST',
  MalformedJson: 'HTTP_MALFORMED_JSON',
  NotFound: 'HTTP_NOT_FOUND',
  MethodNotAllowed: 'HTTP_METHOD_NOT_ALLOWED',
  NoServer: 'HTTP_NO_SERVER',
  NoClient: 'HTTP_NO_CLIENT',
  Internal: 'HTTP_INTERNAL',
} as const;
export type HttpErrorCode = (typeof HttpErrorCode)[keyof typeof HttpErrorCode];

/** An error with the HTTP status to answer and the plain-text message to send. */
export class HttpError extends Error {
  constructor(
    readonly code: HttpErrorCode | string,
    readonly status: number,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'HttpError';
  }
}

/** A 400 whose message names the offending field or parameter. */
export function badRequest(message: string): HttpError {
  return new HttpError(HttpErrorCode.BadRequest, 400, message);
}

/** A 404 such as "job not found". */
export function notFound(what: string): HttpError {
  return new HttpError(HttpErrorCode.NotFound, 404, `${what} not found`);
}

interface FastifyLikeError {
  statusCode?: number;
  code?: string;
  message?: string;
}

/**
 * Maps any thrown value to an HttpError: HttpError as is, ServerError by its status, fastify's
 * own errors (body too large, bad content type) by their statusCode, everything else to 500.
 */
export function toHttpError(err: unknown): HttpError {
  if (err instanceof HttpError) return err;
  if (err instanceof ConfinementError) return new HttpError(err.code, CONFINEMENT_STATUS[err.code], err.message, { cause: err });
  if (err instanceof ServerError) {
    const status = Number.isInteger(err.status) && err.status >= 400 && err.status < 600 ? err.status : 500;
    return new HttpError(err.code, status, err.message, { cause: err });
  }
  if (typeof err === 'object' && err !== null) {
    const e = err as FastifyLikeError;
    if (typeof e.statusCode === 'number' && e.statusCode >= 400 && e.statusCode < 600) {
      return new HttpError(e.code ?? HttpErrorCode.BadRequest, e.statusCode, e.message ?? 'bad request', { cause: err });
    }
  }
  const message = err instanceof Error ? err.message : String(err);
  return new HttpError(HttpErrorCode.Internal, 500, message, { cause: err });
}
