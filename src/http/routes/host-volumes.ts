/**
 * Nomad 1.10's dynamic host volume routes (`nomad volume create|register|delete|status` with
 * `type = "host"`, the web UI's Storage page, Terraform's nomad_dynamic_host_volume):
 * - `PUT|POST /v1/volume/host/create` and `/register` (body `{Volume, PolicyOverride}`) answer
 *   `{Volume, Warnings}` once the node has acted (host-volume-endpoint.ts);
 * - `GET /v1/volume/host/:id` answers the volume with the allocations claiming it; 404 "volume not found";
 * - `DELETE /v1/volume/host/:id` (refused while claimed);
 * - `GET /v1/volumes?type=host` (served with the CSI list in features-off.ts) lists stubs, by
 *   `?namespace=` (`*`: all the token may read), `?prefix=`, `?node_id=`, `?node_pool=`.
 * Internal, for the node's own client (its SecretID as token): the blocking watch of the node's
 * volumes and the report of what it did with one.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { nodeHostVolumesTableKey } from '../../server/state/state-reader.js';
import { hostVolumeTableKey } from '../../server/state/object-tables.js';
import { hostVolumeStub, hostVolumeView, type HostVolume, type HostVolumeStub } from '../../structs/dynamic-host-volume.js';
import { CaravanError } from '../../structs/caravan-error.js';
import { allocStubView } from '../api-views/alloc-views.js';
import { permissionDenied, requestAcl } from '../acl/acl-gate.js';
import { acl } from '../acl/route-acl.js';
import { HttpError } from '../http-errors.js';
import { queryParam, tokenFromHeaders, type RawQuery } from '../query-options.js';
import { answerRead, answerWrite, modifyIndex, requireServer, type RouteContext } from '../route-context.js';
import type { ServerApi } from '../../server/server-api.js';
import { hostVolumeClaims } from '../../server/endpoints/host-volume-endpoint.js';

type IdReq = FastifyRequest<{ Params: { id: string } }>;

function endpointOf(ctx: RouteContext): NonNullable<ServerApi['hostVolumes']> {
  const server = requireServer(ctx);
  if (!server.hostVolumes) throw new HttpError('HTTP_NOT_SUPPORTED', { feature: 'dynamic host volumes' });
  return server.hostVolumes;
}

/** The request's namespace (`?namespace=`, default "default"). */
function requestNamespace(req: FastifyRequest): string {
  return queryParam(req.query as RawQuery, 'namespace') || 'default';
}

/**
 * The gate checked the capability in `?namespace=`; a body naming another namespace needs it
 * there too (Nomad checks the volume's own namespace).
 */
function checkBodyNamespace(req: FastifyRequest, capability: string): void {
  const vol = (req.body as { Volume?: { Namespace?: unknown } } | null)?.Volume;
  const ns = typeof vol?.Namespace === 'string' && vol.Namespace !== '' ? vol.Namespace : undefined;
  const r = requestAcl(req);
  if (ns && r && !r.acl.allowNamespaceOperation(ns, capability)) throw permissionDenied();
}

/** The volume with the allocations that claim it (Nomad denormalizes them on read). */
function volumeWithAllocs(server: ServerApi, v: HostVolume): ReturnType<typeof hostVolumeView> & { Allocations: ReturnType<typeof allocStubView>[] } {
  const allocs = hostVolumeClaims(server.state, v);
  return { ...hostVolumeView(v), Allocations: allocs.map(allocStubView) };
}

/** The `GET /v1/volumes?type=host` answer (see features-off.ts, which owns the route). */
export function listHostVolumes(server: ServerApi, req: FastifyRequest, namespace: string, prefix: string): HostVolumeStub[] {
  const q = req.query as RawQuery;
  const nodeId = queryParam(q, 'node_id') ?? '';
  const pool = queryParam(q, 'node_pool') ?? '';
  return server.state
    .hostVolumes(namespace, prefix)
    .filter((v) => (nodeId === '' || v.NodeID === nodeId) && (pool === '' || v.NodePool === pool))
    .map(hostVolumeStub);
}

/** Registers /v1/volume/host/* and the clients' internal volume routes. */
export function registerHostVolumeRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const write = (op: 'create' | 'register') => async (req: FastifyRequest, reply: Parameters<typeof answerWrite>[1]) => {
    checkBodyNamespace(req, `host-volume-${op}`);
    const ep = endpointOf(ctx);
    const res = op === 'create' ? await ep.create(req.body, requestNamespace(req)) : await ep.register(req.body, requestNamespace(req));
    return answerWrite(req, reply, res.index, { Volume: res.volume ? hostVolumeView(res.volume) : null, Warnings: '' });
  };
  app.route({ method: ['PUT', 'POST'], url: '/v1/volume/host/create', ...acl.ns('host-volume-create'), handler: write('create') });
  app.route({ method: ['PUT', 'POST'], url: '/v1/volume/host/register', ...acl.ns('host-volume-register'), handler: write('register') });

  app.get('/v1/volume/host/:id', acl.ns('host-volume-read'), (req: IdReq, reply) =>
    // Waits on this volume only, as Nomad's HostVolume.Get (the claiming allocations are read
    // beside it, not watched): writes to allocations or other volumes wake none of its readers.
    answerRead(ctx, req, reply, [hostVolumeTableKey(req.params.id)], (server, opts) => {
      const v = server.state.hostVolumeById(req.params.id);
      if (!v || v.Namespace !== opts.namespace) throw new CaravanError('HOST_VOLUME_NOT_FOUND', {});
      return volumeWithAllocs(server, v);
    }, modifyIndex),
  );

  app.delete('/v1/volume/host/:id', acl.ns('host-volume-delete'), async (req: IdReq, reply) => {
    const res = await endpointOf(ctx).delete(req.params.id, requestNamespace(req));
    return answerWrite(req, reply, res.index, {});
  });

  // The node's client watches its volumes to act on them: blocked on that node's volumes only, so
  // a volume written on one node wakes no other node's client. The index is that of the node's volumes.
  app.get('/v1/internal/node/:id/host-volumes', acl.need({ kind: 'own-node-or', else: { kind: 'rule', rule: 'node', level: 'read' } }), (req: IdReq, reply) =>
    answerRead(ctx, req, reply, [nodeHostVolumesTableKey(req.params.id)], (server) => server.state.hostVolumesByNode(req.params.id)),
  );

  app.put('/v1/internal/host-volumes/report', acl.nodeSecret(), async (req, reply) => {
    const res = await endpointOf(ctx).reportFromClient(req.body, tokenFromHeaders(req.headers));
    return answerWrite(req, reply, res.index, { Index: res.index });
  });
}
