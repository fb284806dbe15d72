/**
 * Decoding request bodies: the JSON parser registered for every content type (Nomad's
 * clients do not always send one), and typed accessors that answer 400 naming the field.
 */
import { HttpError, badRequest } from './http-errors.js';

/** Parses a request body as JSON; an empty body is `undefined`; malformed JSON is a 400. */
export function parseJsonBody(text: string): unknown {
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    const detail = err instanceof Error ? err.message : String(err);
    throw new HttpError('HTTP_MALFORMED_JSON', { reason: detail }, { cause: err });
  }
}

/** A JSON object body (400 when the body is missing or not an object). */
export function objectBody(body: unknown, what = 'request body'): Record<string, unknown> {
  if (body === undefined || body === null) throw badRequest(`${what} is required`);
  if (typeof body !== 'object' || Array.isArray(body)) throw badRequest(`${what} must be a JSON object`);
  return body as Record<string, unknown>;
}

/** The object body, or an empty object when no body was sent. */
export function optionalObjectBody(body: unknown): Record<string, unknown> {
  if (body === undefined || body === null) return {};
  return objectBody(body);
}

/** A required object field. */
export function objectField(obj: Record<string, unknown>, name: string): Record<string, unknown> {
  const v = obj[name];
  if (v === undefined || v === null) throw badRequest(`${name} must be specified`);
  if (typeof v !== 'object' || Array.isArray(v)) throw badRequest(`${name} must be a JSON object`);
  return v as Record<string, unknown>;
}

/** A required array field. */
export function arrayField(obj: Record<string, unknown>, name: string): unknown[] {
  const v = obj[name];
  if (v === undefined || v === null) throw badRequest(`${name} must be specified`);
  if (!Array.isArray(v)) throw badRequest(`${name} must be a JSON array`);
  return v;
}

/** A required non-empty string field. */
export function stringField(obj: Record<string, unknown>, name: string): string {
  const v = obj[name];
  if (v === undefined || v === null || v === '') throw badRequest(`${name} must be specified`);
  if (typeof v !== 'string') throw badRequest(`${name} must be a string`);
  return v;
}

/** An optional string field ("" when absent). */
export function optionalString(obj: Record<string, unknown>, name: string): string {
  const v = obj[name];
  if (v === undefined || v === null) return '';
  if (typeof v !== 'string') throw badRequest(`${name} must be a string`);
  return v;
}

/** An optional boolean field (false when absent). */
export function optionalBool(obj: Record<string, unknown>, name: string): boolean {
  const v = obj[name];
  if (v === undefined || v === null) return false;
  if (typeof v !== 'boolean') throw badRequest(`${name} must be a boolean`);
  return v;
}

/** An optional non-negative integer field (0 when absent). */
export function optionalUint(obj: Record<string, unknown>, name: string): number {
  const v = obj[name];
  if (v === undefined || v === null) return 0;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) throw badRequest(`${name} must be a non-negative integer`);
  return v;
}
