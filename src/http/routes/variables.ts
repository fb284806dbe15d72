/**
 * Variables, as Nomad's API: `GET /v1/vars` (`?prefix=`, `?namespace=` with `*` for all,
 * filter and pagination; metadata only, each kept when the token may `list` its path) and
 * `/v1/var/:path` — GET (the variable with its Items; 404 "variable not found"), PUT/POST (write
 * from a Variable body) and DELETE (204). Writes take `?cas=<index>`: the write happens only
 * when the variable's ModifyIndex is that index (0: only when there is none); otherwise a 409
 * carries the variable as it is (its Items only when the token may read it), and nothing changes.
 * Locks (Nomad's lock API): `PUT /v1/var/:path?lock-acquire` (body: the Variable with
 * `Lock {TTL, LockDelay}`, items optional; answers the variable with `Lock.ID`),
 * `?lock-renew` and `?lock-release` (body: `Lock.ID`); a held lock, a wrong ID or the delay
 * after an expiry is a 409 with the variable. A locked variable is written or deleted only with
 * its lock's ID (`Lock.ID` in the body, or `?lock-id=` on a delete). Only the holder sees the
 * lock's ID; every other answer carries the Lock without it.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Table } from '../../server/state/state-reader.js';
import type { VariableWriteResult } from '../../server/server-api.js';
import { CaravanError } from '../../structs/caravan-error.js';
import { lockIdOf, publicVariable, variableMetadata, type Variable } from '../../structs/variable.js';
import { requestAcl } from '../acl/acl-gate.js';
import { acl, variableTarget } from '../acl/route-acl.js';
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

/** The lock operation a PUT asks for (`?lock-acquire`, `?lock-renew`, `?lock-release`), or undefined for a write. */
function lockOperation(q: RawQuery): 'lock-acquire' | 'lock-renew' | 'lock-release' | undefined {
  const ops = (['lock-acquire', 'lock-renew', 'lock-release'] as const).filter((o) => queryParam(q, o) !== undefined);
  if (ops.length > 1) throw badRequest(`only one lock operation at a time, got ${ops.join(' and ')}`);
  return ops[0];
}

/** A delete's lock ID from `?lock-id=` (clients that send no body). */
function lockIdParam(q: RawQuery): string | undefined {
  const v = queryParam(q, 'lock-id');
  return v === undefined || v === '' ? undefined : v;
}

/**
 * The namespace and path the request acts on, as the ACL gate checked them (variableTarget), or
 * a 400 without a path.
 */
function targetOf(req: VarReq, op: 'read' | 'write' | 'destroy'): { ns: string; path: string } {
  const { namespace, path } = variableTarget(op, req.query as RawQuery, req.params, req.body);
  if (path === '') throw badRequest('missing variable path');
  return { ns: namespace, path };
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
    const { ns, path } = targetOf(req, 'read');
    return answerRead(ctx, req, reply, [Table.Variables], (server) => {
      const v = server.state.variableByPath(ns, path);
      if (!v) throw new CaravanError('VARIABLE_NOT_FOUND', {});
      return publicVariable(v);
    }, modifyIndex);
  });

  /** A conflict: 409 with the variable as it is, its Items kept from a token that may not read it. */
  const conflict = (req: VarReq, reply: FastifyReply, v: Variable): FastifyReply => {
    const r = requestAcl(req);
    const readable = !r || r.acl.allowVariableOperation(v.Namespace, v.Path, 'read');
    reply.header('X-Nomad-Index', String(v.ModifyIndex));
    return sendJson(reply, readable ? publicVariable(v) : { ...variableMetadata(v), Items: null }, queryParam(req.query as RawQuery, 'pretty') !== undefined, 409);
  };

  const variablesOf = () => {
    const server = requireServer(ctx);
    if (!server.variables) throw new HttpError('HTTP_NOT_SUPPORTED', { feature: 'variables' });
    return server.variables;
  };

  const put = async (req: VarReq, reply: FastifyReply) => {
    const { ns, path } = targetOf(req, 'write');
    const q = req.query as RawQuery;
    const op = lockOperation(q);
    const vars = variablesOf();
    if (op) {
      const res = op === 'lock-acquire' ? await vars.acquireLock(req.body, ns, path) : op === 'lock-renew' ? await vars.renewLock(req.body, ns, path) : await vars.releaseLock(req.body, ns, path);
      if (res.conflict) return conflict(req, reply, res.conflict);
      // The holder sees its lock's ID; a renewal answers the metadata (Nomad's VariableMetadata).
      const v = res.written ?? null;
      return answerWrite(req, reply, res.index, v && op === 'lock-renew' ? { ...variableMetadata(v), Lock: v.Lock } : v);
    }
    const cas = parseCas(q);
    const res: VariableWriteResult = await vars.setVariable(req.body, ns, path, cas);
    if (res.conflict) return conflict(req, reply, res.conflict);
    return answerWrite(req, reply, res.index, res.written ?? null);
  };
  app.put('/v1/var/*', acl.variable('write'), put);
  app.post('/v1/var/*', acl.variable('write'), put);

  app.delete('/v1/var/*', acl.variable('destroy'), async (req: VarReq, reply) => {
    const { ns, path } = targetOf(req, 'destroy');
    const cas = parseCas(req.query as RawQuery);
    const res = await variablesOf().deleteVariable(ns, path, cas, lockIdOf(req.body) ?? lockIdParam(req.query as RawQuery));
    if (res.conflict) return conflict(req, reply, res.conflict);
    reply.header('X-Nomad-Index', String(Math.max(1, res.index)));
    return reply.code(204).send();
  });
}
