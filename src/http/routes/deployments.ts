/**
 * Deployment routes, as Nomad's: list (`?prefix=`, namespaced), read one, its allocations, and
 * the writes promote / fail / pause (resume with Pause false) / allocation-health, which answer
 * Nomad's DeploymentUpdateResponse. The leader's deployment watcher does the rest.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Table, jobAllocsTableKey } from '../../server/state/state-reader.js';
import { deploymentTableKey } from '../../server/state/object-tables.js';
import type { DeploymentAction } from '../../server/server-api.js';
import { allocStubView } from '../api-views/alloc-views.js';
import type { Deployment } from '../../structs/index.js';
import { HttpError, badRequest, notFound } from '../http-errors.js';
import { optionalBool, optionalObjectBody } from '../request-body.js';
import { answerRead, answerWrite, requireServer, modifyIndex, type RouteContext } from '../route-context.js';
import { PageOrder, pagedList } from '../list-options.js';
import { acl } from '../acl/route-acl.js';

type IdRequest = FastifyRequest<{ Params: { id: string } }>;

function inNamespace(d: Deployment, namespace: string): boolean {
  return namespace === '*' || d.Namespace === namespace;
}

/** A list of strings from a request body field (absent: empty). */
function stringList(body: Record<string, unknown>, name: string): string[] {
  const v = body[name];
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v) || v.some((x) => typeof x !== 'string')) throw badRequest(`${name} must be a list of strings`);
  return v as string[];
}

/** The action a write route asks for, from its body. */
function actionOf(kind: 'promote' | 'fail' | 'pause' | 'alloc-health' | 'unblock', body: Record<string, unknown>): DeploymentAction {
  switch (kind) {
    case 'promote': {
      const groups = stringList(body, 'Groups');
      const all = optionalBool(body, 'All');
      if (!all && groups.length === 0) throw badRequest('must set All or Groups to promote');
      return { Type: 'promote', All: all, Groups: groups };
    }
    case 'fail':
      return { Type: 'fail' };
    case 'unblock':
      return { Type: 'unblock' };
    case 'pause':
      return { Type: 'pause', Pause: optionalBool(body, 'Pause') };
    case 'alloc-health':
      return {
        Type: 'alloc-health',
        HealthyAllocationIDs: stringList(body, 'HealthyAllocationIDs'),
        UnhealthyAllocationIDs: stringList(body, 'UnhealthyAllocationIDs'),
      };
    default: {
      const never: never = kind;
      throw badRequest(`unknown deployment action ${String(never)}`);
    }
  }
}

/** Registers the deployment routes. */
export function registerDeploymentRoutes(app: FastifyInstance, ctx: RouteContext): void {
  app.get('/v1/deployments', acl.ns('read-job'), (req, reply) =>
    answerRead(ctx, req, reply, [Table.Deployments], (server, opts) =>
      // Paged as Nomad's Deployment.List: by create index and ID, by ID under ?prefix=.
      pagedList(
        server.state
          .deployments(opts.prefix || undefined)
          .filter((d) => inNamespace(d, opts.namespace))
          .sort((a, b) => b.CreateIndex - a.CreateIndex),
        opts.prefix ? PageOrder.Id : PageOrder.CreateIndexId,
      ),
    ),
  );

  app.get<{ Params: { id: string } }>('/v1/deployment/:id', acl.ns('read-job', 'deployment'), (req, reply) =>
    // Waits on this deployment only.
    answerRead(ctx, req, reply, [deploymentTableKey(req.params.id)], (server) => {
      const d = server.state.deploymentById(req.params.id);
      if (!d) throw notFound('deployment');
      return d;
    }, modifyIndex),
  );

  app.get<{ Params: { id: string } }>('/v1/deployment/allocations/:id', acl.ns('read-job', 'deployment'), (req, reply) => {
    // A deployment's allocations are its job's: wait on that job's allocations only and answer the
    // allocation table's index, as Nomad's Deployment.Allocations.
    const known = requireServer(ctx).state.deploymentById(req.params.id);
    return answerRead(
      ctx,
      req,
      reply,
      known ? [jobAllocsTableKey(known.Namespace, known.JobID)] : [Table.Deployments],
      (server) => {
        const d = server.state.deploymentById(req.params.id);
        if (!d) throw notFound('deployment');
        return server.state
          .allocsByJob(d.Namespace, d.JobID)
          .filter((a) => a.DeploymentID === d.ID)
          .map(allocStubView);
      },
      () => requireServer(ctx).state.tableIndex(Table.Allocs),
    );
  });

  const write = (kind: 'promote' | 'fail' | 'pause' | 'alloc-health' | 'unblock') => async (req: IdRequest, reply: FastifyReply) => {
    const server = requireServer(ctx);
    if (!server.deploymentAction) throw new HttpError('HTTP_NOT_SUPPORTED', { feature: 'deployments' });
    const body = optionalObjectBody(req.body);
    const action = actionOf(kind, body);
    if (!server.state.deploymentById(req.params.id)) throw notFound('deployment');
    const res = await server.deploymentAction(req.params.id, action);
    return answerWrite(req, reply, res.index, {
      EvalID: res.evalId,
      EvalCreateIndex: res.evalId ? res.index : 0,
      DeploymentModifyIndex: res.index,
      RevertedJobVersion: null,
      Index: res.index,
      LastContact: 0,
      KnownLeader: true,
    });
  };
  for (const [path, kind] of [
    ['/v1/deployment/promote/:id', 'promote'],
    ['/v1/deployment/fail/:id', 'fail'],
    ['/v1/deployment/pause/:id', 'pause'],
    ['/v1/deployment/allocation-health/:id', 'alloc-health'],
    ['/v1/deployment/unblock/:id', 'unblock'],
  ] as const) {
    app.put<{ Params: { id: string } }>(path, acl.ns('submit-job', 'deployment'), write(kind));
    app.post<{ Params: { id: string } }>(path, acl.ns('submit-job', 'deployment'), write(kind));
  }
}
