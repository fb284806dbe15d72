import { CaravanError, type CaravanErrorOptions } from '../structs/caravan-error.js';
import type { ErrorCode, ErrorFields } from '../structs/error-catalogue.js';

/** An error of the server core; its status and message come from the error catalogue. */
export class ServerError<C extends ErrorCode = ErrorCode> extends CaravanError<C> {
  constructor(code: C, fields: ErrorFields<C>, options?: CaravanErrorOptions) {
    super(code, fields, options);
    this.name = 'ServerError';
  }
}
