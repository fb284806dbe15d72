/**
 * The allocation directory of an allocation this client holds, or a 404 naming it.
 */
import type { ClientHttpApi } from '../client-http-api.js';
import { HttpError } from '../http-errors.js';

/** `client.allocDir(allocId)`, or a 404 when the client has no directory for it. */
export function localAllocDir(client: ClientHttpApi, allocId: string): string {
  const dir = client.allocDir(allocId);
  if (dir === undefined) throw new HttpError('ALLOC_UNKNOWN', { alloc: allocId, detail: ': no allocation directory on this client' });
  return dir;
}
