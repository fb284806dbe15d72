/**
 * Node routes: list (with ?prefix=), read one, the node's allocations (full objects with
 * their Job: clients block on this to learn their work), and scheduling eligibility.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Table, nodeAllocsTableKey, nodeTableKey } from '../../server/state/state-reader.js';
import { NodeEligibility } from '../../structs/node.js';
import { badRequest, HttpError, notFound } from '../http-errors.js';
import { allocView } from '../api-views/alloc-views.js';
import { nodeListStub, nodeView } from '../api-views/node-views.js';
import { PageOrder, pagedList } from '../list-options.js';
import { queryFlag, type RawQuery } from '../query-options.js';
import { objectBody, stringField } from '../request-body.js';
import { answerRead, answerWrite, requireServer, modifyIndex, type RouteContext } from '../route-context.js';
import { acl } from '../acl/route-acl.js';

/** Registers the node routes. */
export function registerNodeRoutes(app: FastifyInstance, ctx: RouteContext): void {
  app.get('/v1/nodes', acl.rule('node', 'read'), (req, reply) =>
    answerRead(ctx, req, reply, [Table.Nodes], (server, opts) => {
      const withOs = queryFlag(req.query as RawQuery, 'os');
      const withResources = queryFlag(req.query as RawQuery, 'resources');
      // Paged by ID, as Nomad's Node.List; stubs are made for the page only.
      return pagedList(server.state.nodes(opts.prefix || undefined), PageOrder.Id, (n) => nodeListStub(n, withOs, withResources));
    }),
  );

  app.get<{ Params: { id: string } }>('/v1/node/:id', acl.rule('node', 'read'), (req, reply) =>
    // Waits on this node's record only: other nodes' updates wake no watch of it.
    answerRead(ctx, req, reply, [nodeTableKey(req.params.id)], (server) => {
      const node = server.state.nodeById(req.params.id);
      if (!node) throw notFound('node');
      return nodeView(node);
    }, modifyIndex),
  );

  app.get<{ Params: { id: string } }>('/v1/node/:id/allocations', acl.need({ kind: 'own-node-or', else: { kind: 'rule', rule: 'node', level: 'read' } }), (req, reply) =>
    // Waits on this node's allocations only (Nomad's watch on the allocs-by-node index): with
    // thousands of clients blocked here, a write elsewhere must wake none of them. The answer's
    // index is the index at which the node's allocations last changed.
    answerRead(ctx, req, reply, [nodeAllocsTableKey(req.params.id)], (server) => server.state.allocsByNode(req.params.id).map(allocView)),
  );

  const eligibility = async (req: FastifyRequest<{ Params: { id: string } }>, reply: FastifyReply) => {
    const server = requireServer(ctx);
    const body = objectBody(req.body);
    const value = stringField(body, 'Eligibility');
    if (value !== NodeEligibility.Eligible && value !== NodeEligibility.Ineligible) {
      throw badRequest(`invalid Eligibility ${JSON.stringify(value)} (want "eligible" or "ineligible")`);
    }
    const node = server.state.nodeById(req.params.id);
    if (!node) throw notFound('node');
    const res = await server.updateNodeEligibility(req.params.id, value);
    return answerWrite(req, reply, res.index, {
      EvalIDs: null,
      EvalCreateIndex: 0,
      NodeModifyIndex: res.index,
      Index: res.index,
      LastContact: 0,
      KnownLeader: true,
    });
  };
  // Nomad's NodeEvalResponse / NodePurgeResponse.
  const nodeEvalAnswer = (req: FastifyRequest, reply: FastifyReply, res: { evalIds: string[]; index: number }) =>
    answerWrite(req, reply, res.index, { EvalIDs: res.evalIds, EvalCreateIndex: res.evalIds.length > 0 ? res.index : 0, NodeModifyIndex: res.index, Index: res.index });
  const evaluate = async (req: FastifyRequest<{ Params: { id: string } }>, reply: FastifyReply) => {
    const server = requireServer(ctx);
    if (!server.evaluateNode) throw new HttpError('HTTP_NOT_SUPPORTED', { feature: 'node evaluation' });
    const res = await server.evaluateNode(req.params.id);
    // Nomad answers EvalIDs; its Go client (Nodes().ForceEvaluate) reads EvalID: both are sent.
    return answerWrite(req, reply, res.index, { EvalIDs: res.evalIds, EvalID: res.evalIds[0] ?? '', EvalCreateIndex: res.evalIds.length > 0 ? res.index : 0, NodeModifyIndex: res.index, Index: res.index });
  };
  app.put<{ Params: { id: string } }>('/v1/node/:id/evaluate', acl.rule('node', 'write'), evaluate);
  app.post<{ Params: { id: string } }>('/v1/node/:id/evaluate', acl.rule('node', 'write'), evaluate);
  const purge = async (req: FastifyRequest<{ Params: { id: string } }>, reply: FastifyReply) => {
    const server = requireServer(ctx);
    if (!server.purgeNode) throw new HttpError('HTTP_NOT_SUPPORTED', { feature: 'node purge' });
    return nodeEvalAnswer(req, reply, await server.purgeNode(req.params.id));
  };
  app.put<{ Params: { id: string } }>('/v1/node/:id/purge', acl.rule('node', 'write'), purge);
  app.post<{ Params: { id: string } }>('/v1/node/:id/purge', acl.rule('node', 'write'), purge);

  app.put<{ Params: { id: string } }>('/v1/node/:id/eligibility', acl.rule('node', 'write'), eligibility);
  app.post<{ Params: { id: string } }>('/v1/node/:id/eligibility', acl.rule('node', 'write'), eligibility);
}
