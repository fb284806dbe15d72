/**
 * Variables, as Nomad's API: `GET /v1/vars` (`?prefix=`, `?namespace=` with `*` for all,
 * filter and pagination; metadata only, each kept when the token may `list` its path) and
 * `/v1/var/:path` — GET (the variable with its Items; 404 "variable not found"), PUT/POST (write
 * from a Variable body) and DELETE (204). Writes take `?cas=<index>`: the write happens only
 * when the variable's ModifyIndex is that index (0: only when there is none); otherwise a 409
 * carries the variable as it is (its Items only when the token may read it), and nothing changes.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Table, type VariableWriteResult } from '../../server/server-api.js';
import { CaravanError } from '../../structs/caravan-error.js';
import { variableMetadata, type Variable } from '../../structs/variable.js';
import { requestAcl } from '../acl/acl-gate.js';
import { acl, variableNamespace } from '../acl/route-acl.js';
import { badRequest, HttpError } from '../http-errors.js';
import { queryParam, type RawQuery } from '../query-options.js';
import { answerRead, answerWrite, modifyIndex, requireServer, sendJson, type RouteContext } from '../route-context.js';

type VarReq = FastifyRequest<{ Params: { '*': string } }>;

/** The `?cas=` index, or undefined without one; a malformed one is a 400 (Nomad's text). */
function parseCas(q: RawQuery): number | undefined {
  const raw = queryParam(q, 'cas');
  if (raw === undefined || raw === '') return undefined;
  if (!/^\d+$/.test(raw)) throw badRequest(`can not parse cas: strconv.ParseUint: parsing ${JSON.stringify(raw)}: invalid syntax`);
  return Number(raw);
}

/** The request's variable path (Nomad's client trims slashes; so do we), or a 400 without one. */
function pathOf(req: VarReq): string {
  const path = (req.params['*'] ?? '').replace(/^\/+|\/+$/g, '');
  if (path === '') throw badRequest('missing variable path');
  return path;
}

/** Registers /v1/vars and /v1/var/*. */
export function registerVariableRoutes(app: FastifyInstance, ctx: RouteContext): void {
  app.get('/v1/vars', acl.filtered(), (req, reply) =>
    answerRead(ctx, req, reply, [Table.Variables], (server, opts) => {
      const r = requestAcl(req);
      return server.state
        .variables(opts.namespace, opts.prefix)
        .filter((v) => !r || r.acl.allowVariableOperation(v.Namespace, v.Path, 'list'))
        .map(variableMetadata);
    }),
  );

  app.get('/v1/var/*', acl.variable('read'), (req: VarReq, reply) => {
    const path = pathOf(req);
    const ns = variableNamespace(req.query as RawQuery, undefined);
    return answerRead(ctx, req, reply, [Table.Variables], (server) => {
      const v = server.state.variableByPath(ns, path);
      if (!v) throw new CaravanError('VARIABLE_NOT_FOUND', {});
      return v;
    }, modifyIndex);
  });

  /** A conflict: 409 with the variable as it is, its Items kept from a token that may not read it. */
  const conflict = (req: VarReq, reply: FastifyReply, v: Variable): FastifyReply => {
    const r = requestAcl(req);
    const readable = !r || r.acl.allowVariableOperation(v.Namespace, v.Path, 'read');
    reply.header('X-Nomad-Index', String(v.ModifyIndex));
    return sendJson(reply, readable ? v : { ...variableMetadata(v), Items: null }, queryParam(req.query as RawQuery, 'pretty') !== undefined, 409);
  };

  const variablesOf = () => {
    const server = requireServer(ctx);
    if (!server.variables) throw new HttpError('HTTP_NOT_SUPPORTED', { feature: 'variables' });
    return server.variables;
  };

  const put = async (req: VarReq, reply: FastifyReply) => {
    const path = pathOf(req);
    const cas = parseCas(req.query as RawQuery);
    const ns = variableNamespace(req.query as RawQuery, req.body);
    const res: VariableWriteResult = await variablesOf().setVariable(req.body, ns, path, cas);
    if (res.conflict) return conflict(req, reply, res.conflict);
    return answerWrite(req, reply, res.index, res.written ?? null);
  };
  app.put('/v1/var/*', acl.variable('write'), put);
  app.post('/v1/var/*', acl.variable('write'), put);

  app.delete('/v1/var/*', acl.variable('destroy'), async (req: VarReq, reply) => {
    const path = pathOf(req);
    const cas = parseCas(req.query as RawQuery);
    const ns = variableNamespace(req.query as RawQuery, undefined);
    const res = await variablesOf().deleteVariable(ns, path, cas);
    if (res.conflict) return conflict(req, reply, res.conflict);
    reply.header('X-Nomad-Index', String(Math.max(1, res.index)));
    return reply.code(204).send();
  });
}
