/**
 * The routing decision for a client route's request, from the route context: local client,
 * or forward through this server's state to the client holding the allocation.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { RouteContext } from '../route-context.js';
import { FORWARDED_HEADER, locatorFromState, resolveAllocTarget, type AllocTarget } from './alloc-target.js';

/** Where the request for `allocId` with `headers` is answered; throws 404 if nowhere. */
export function requestTarget(ctx: RouteContext, allocId: string, headers: IncomingHttpHeaders): AllocTarget {
  const locate = ctx.server ? locatorFromState(ctx.server.state) : undefined;
  return resolveAllocTarget(allocId, ctx.client, locate, headers[FORWARDED_HEADER] !== undefined);
}
