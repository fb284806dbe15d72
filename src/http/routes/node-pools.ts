/**
 * Node pools, as Nomad's API: `GET /v1/node/pools` (`?prefix=`, filter, pagination),
 * `PUT/POST /v1/node/pools` (a NodePool body), `GET/PUT/POST/DELETE /v1/node/pool/:name`, and a
 * pool's members: `GET /v1/node/pool/:name/nodes` (every node for `all`) and
 * `GET /v1/node/pool/:name/jobs` (in `?namespace=`, `*` for all; every job for `all`).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Table } from '../../server/state/state-reader.js';
import { CaravanError } from '../../structs/caravan-error.js';
import { BuiltinNodePool } from '../../structs/node-pool.js';
import { jobListStub } from '../api-views/job-views.js';
import { nodeListStub } from '../api-views/node-views.js';
import { acl } from '../acl/route-acl.js';
import { HttpError } from '../http-errors.js';
import { stubOf } from '../list-options.js';
import { queryFlag, type RawQuery } from '../query-options.js';
import { objectBody } from '../request-body.js';
import { answerRead, answerWrite, modifyIndex, requireServer, type RouteContext } from '../route-context.js';

type PoolReq = FastifyRequest<{ Params: { name?: string } }>;

/** Registers the node pool routes. */
export function registerNodePoolRoutes(app: FastifyInstance, ctx: RouteContext): void {
  app.get('/v1/node/pools', acl.rule('node', 'read'), (req, reply) =>
    answerRead(ctx, req, reply, [Table.NodePools], (server, opts) => server.state.nodePools(opts.prefix)),
  );

  const requirePool = (name: string) => {
    const pool = requireServer(ctx).state.nodePoolByName(name);
    if (!pool) throw new CaravanError('NODE_POOL_NOT_FOUND', { pool: name });
    return pool;
  };

  app.get<{ Params: { name: string } }>('/v1/node/pool/:name', acl.rule('node', 'read'), (req, reply) =>
    answerRead(ctx, req, reply, [Table.NodePools], () => requirePool(req.params.name), modifyIndex),
  );

  app.get<{ Params: { name: string } }>('/v1/node/pool/:name/nodes', acl.rule('node', 'read'), (req, reply) =>
    answerRead(ctx, req, reply, [Table.NodePools, Table.Nodes], (server) => {
      const pool = requirePool(req.params.name);
      const withOs = queryFlag(req.query as RawQuery, 'os');
      const withResources = queryFlag(req.query as RawQuery, 'resources');
      return server.state
        .nodes()
        .filter((n) => pool.Name === BuiltinNodePool.All || n.NodePool === pool.Name)
        .map((n) => stubOf(nodeListStub(n, withOs, withResources), n));
    }),
  );

  app.get<{ Params: { name: string } }>('/v1/node/pool/:name/jobs', acl.ns('read-job'), (req, reply) =>
    answerRead(ctx, req, reply, [Table.NodePools, Table.Jobs, Table.JobSummaries], (server, opts) => {
      const pool = requirePool(req.params.name);
      return server.state
        .jobs(opts.namespace)
        .filter((j) => pool.Name === BuiltinNodePool.All || (j.NodePool || BuiltinNodePool.Default) === pool.Name)
        .map((j) => stubOf(jobListStub(j, server.state.jobSummary(j.Namespace, j.ID)), j));
    }),
  );

  const upsert = async (req: PoolReq, reply: FastifyReply) => {
    const server = requireServer(ctx);
    if (!server.nodePools) throw new HttpError('HTTP_NOT_SUPPORTED', { feature: 'node pools' });
    const body = objectBody(req.body, 'node pool');
    const pathName = req.params.name;
    if (pathName !== undefined && pathName !== '') {
      if (body['Name'] === undefined || body['Name'] === '') body['Name'] = pathName;
      else if (body['Name'] !== pathName) throw new CaravanError('NODE_POOL_INVALID', { reason: 'Node pool name does not match request path' });
    }
    const res = await server.nodePools.upsertNodePools([body]);
    return answerWrite(req, reply, res.index, null);
  };
  app.put('/v1/node/pools', acl.management(), upsert);
  app.post('/v1/node/pools', acl.management(), upsert);
  app.put('/v1/node/pool/:name', acl.management(), upsert);
  app.post('/v1/node/pool/:name', acl.management(), upsert);

  app.delete<{ Params: { name: string } }>('/v1/node/pool/:name', acl.management(), async (req, reply) => {
    const server = requireServer(ctx);
    if (!server.nodePools) throw new HttpError('HTTP_NOT_SUPPORTED', { feature: 'node pools' });
    const res = await server.nodePools.deleteNodePool(req.params.name);
    return answerWrite(req, reply, res.index, null);
  });
}
