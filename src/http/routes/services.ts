/**
 * Nomad's native service catalogue (`provider = "nomad"`): `GET /v1/services` (each namespace's
 * service names with their tags; `?namespace=*` for all the token may read), `GET
 * /v1/service/:name` (the instances; `?tag=` keeps those with the tag, `?filter=` filters them,
 * then `?choose=N|key` picks N by rendezvous hashing) and `DELETE /v1/service/:name/:id`
 * (submit-job). Reads need read-job and block: the list on the service table, one service on
 * its own index (a change to another service never wakes it).
 */
import type { FastifyInstance } from 'fastify';
import { serviceTableKey, Table } from '../../server/state/state-reader.js';
import type { StateReader } from '../../server/state/state-reader.js';
import { CaravanError } from '../../structs/caravan-error.js';
import { chooseServices, serviceListStubs, type ServiceRegistration, type ServiceRegistrationListStub } from '../../structs/service-registration.js';
import { acl } from '../acl/route-acl.js';
import { evaluateFilter } from '../filter/bexpr-eval.js';
import { HttpError } from '../http-errors.js';
import { parseListOptions } from '../list-options.js';
import { queryParam, type RawQuery } from '../query-options.js';
import { answerRead, answerWrite, queryOptions, requireServer, type RouteContext } from '../route-context.js';

/**
 * The list's answers by state and namespace, kept until the service table moves: a fleet of
 * load balancers polling `GET /v1/services` between changes costs one walk of the table.
 */
const stubCache = new WeakMap<StateReader, Map<string, { index: number; stubs: ServiceRegistrationListStub[] }>>();

function cachedStubs(state: StateReader, namespace: string): ServiceRegistrationListStub[] {
  const index = state.tableIndex(Table.Services);
  let byNs = stubCache.get(state);
  if (!byNs) stubCache.set(state, (byNs = new Map()));
  const hit = byNs.get(namespace);
  if (hit && hit.index === index) return hit.stubs;
  const stubs = serviceListStubs((fn) => state.forEachServiceRegistration(namespace, fn));
  if (byNs.size > 64) byNs.clear();
  byNs.set(namespace, { index, stubs });
  return stubs;
}

/** The instances of one service as `GET /v1/service/:name` answers them (see the file comment). */
function serviceInstances(state: StateReader, q: RawQuery, namespace: string, name: string): ServiceRegistration[] {
  let regs = state.serviceRegistrationsByName(namespace, name);
  const tag = queryParam(q, 'tag');
  if (tag !== undefined && tag !== '') regs = regs.filter((r) => r.Tags?.includes(tag) ?? false);
  const choose = queryParam(q, 'choose');
  if (choose === undefined || choose === '') return regs;
  // The filter first, as Nomad's paginator runs it before the choice (answerRead applies it
  // again to the chosen ones, which changes nothing).
  const { filter } = parseListOptions(q);
  if (filter) regs = regs.filter((r) => evaluateFilter(filter, r));
  const chosen = chooseServices(regs, choose);
  if (!chosen) throw new CaravanError('SERVICE_CHOOSE_INVALID', {});
  return chosen;
}

/** Registers the service routes. */
export function registerServiceRoutes(app: FastifyInstance, ctx: RouteContext): void {
  app.get('/v1/services', acl.ns('read-job'), (req, reply) =>
    answerRead(ctx, req, reply, [Table.Services], (server, opts) => cachedStubs(server.state, opts.namespace)),
  );

  app.get<{ Params: { name: string } }>('/v1/service/:name', acl.ns('read-job'), (req, reply) => {
    const { namespace } = queryOptions(req);
    const name = req.params.name;
    return answerRead(
      ctx,
      req,
      reply,
      // The service's own pseudo-table and index: the query waits for, and is woken by, a change
      // to this service only.
      [serviceTableKey(namespace, name)],
      (server) => serviceInstances(server.state, req.query as RawQuery, namespace, name),
      () => requireServer(ctx).state.serviceIndex(namespace, name),
    );
  });

  app.delete<{ Params: { name: string; id: string } }>('/v1/service/:name/:id', acl.ns('submit-job'), async (req, reply) => {
    const server = requireServer(ctx);
    if (!server.serviceRegistrations) throw new HttpError('HTTP_NOT_SUPPORTED', { feature: 'service registrations' });
    const { namespace } = queryOptions(req);
    const res = await server.serviceRegistrations.deleteById(namespace, req.params.name, req.params.id);
    return answerWrite(req, reply, res.index, null);
  });
}
