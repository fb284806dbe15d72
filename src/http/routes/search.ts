/**
 * Search routes: `PUT|POST /v1/search` ({Prefix, Context}) and `PUT|POST /v1/search/fuzzy`
 * ({Text, Context}). The namespace comes from `?namespace=` (or the body's Namespace), "*"
 * searching every namespace. Answers carry Nomad's query meta in the body and headers.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { badRequest } from '../http-errors.js';
import { queryParam, type RawQuery } from '../query-options.js';
import { objectBody, optionalString } from '../request-body.js';
import { queryOptions, requireServer, sendJson, setQueryMeta, type RouteContext } from '../route-context.js';
import { FuzzyTextError, fuzzySearch } from '../search/fuzzy-search.js';
import { SearchContextError, parseSearchContext, prefixSearch, type SearchContext } from '../search/prefix-search.js';
import { acl } from '../acl/route-acl.js';
import { requestAcl } from '../acl/acl-gate.js';
import { aclFilteredState } from '../acl/filtered-state.js';
import type { StateReader } from '../../server/state/state-reader.js';

function namespaceOf(req: FastifyRequest, body: Record<string, unknown>): string {
  const fromQuery = queryParam(req.query as RawQuery, 'namespace');
  if (fromQuery) return fromQuery;
  return optionalString(body, 'Namespace') || 'default';
}

function contextOf(body: Record<string, unknown>): SearchContext {
  try {
    return parseSearchContext(optionalString(body, 'Context'));
  } catch (err) {
    if (err instanceof SearchContextError) throw badRequest(err.message);
    throw err;
  }
}

/** The state as the request's token may read it (all of it with ACLs off). */
function readable(req: FastifyRequest, state: StateReader): StateReader {
  const r = requestAcl(req);
  return r ? aclFilteredState(state, r.acl) : state;
}

/** Registers the prefix and fuzzy search routes. */
export function registerSearchRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const prefix = (req: FastifyRequest, reply: FastifyReply) => {
    const server = requireServer(ctx);
    const body = objectBody(req.body);
    const res = prefixSearch(readable(req, server.state), optionalString(body, 'Prefix'), contextOf(body), namespaceOf(req, body));
    setQueryMeta(reply, res.index, server);
    return sendJson(
      reply,
      { Matches: res.Matches, Truncations: res.Truncations, Index: res.index, LastContact: 0, KnownLeader: true },
      queryOptions(req).pretty,
    );
  };
  app.put('/v1/search', acl.filtered(), prefix);
  app.post('/v1/search', acl.filtered(), prefix);

  const fuzzy = (req: FastifyRequest, reply: FastifyReply) => {
    const server = requireServer(ctx);
    const body = objectBody(req.body);
    let res;
    try {
      res = fuzzySearch(readable(req, server.state), optionalString(body, 'Text'), contextOf(body), namespaceOf(req, body));
    } catch (err) {
      if (err instanceof FuzzyTextError) throw badRequest(err.message);
      throw err;
    }
    setQueryMeta(reply, res.index, server);
    return sendJson(
      reply,
      { Matches: res.Matches, Truncations: res.Truncations, Index: res.index, LastContact: 0, KnownLeader: true },
      queryOptions(req).pretty,
    );
  };
  app.put('/v1/search/fuzzy', acl.filtered(), fuzzy);
  app.post('/v1/search/fuzzy', acl.filtered(), fuzzy);
}
