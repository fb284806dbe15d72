/**
 * Nomad's dynamic host volume routes (`nomad volume create|register|delete|status -type host`,
 * the web UI's Storage page, Terraform's nomad_dynamic_host_volume). Caravan has no dynamic
 * host volumes yet, so no host volume ever exists:
 * - `GET /v1/volumes?type=host` is the empty list served with the CSI list (features-off.ts);
 * - `GET /v1/volume/host/:id` → 404 "volume not found", Nomad's text for an unknown volume;
 * - `PUT|POST /v1/volume/host/create` and `/register`, `DELETE /v1/volume/host/:id` → 400
 *   saying dynamic host volumes are not supported, so that nothing is believed created.
 */
import type { FastifyInstance } from 'fastify';
import { acl } from '../acl/route-acl.js';
import { badRequest, notFound } from '../http-errors.js';

const NOT_SUPPORTED = 'dynamic host volumes are not supported by Caravan yet';

function notSupported(): never {
  throw badRequest(NOT_SUPPORTED);
}

/** Registers /v1/volume/host/*. */
export function registerHostVolumeOffRoutes(app: FastifyInstance): void {
  app.route({ method: ['PUT', 'POST'], url: '/v1/volume/host/create', ...acl.ns('host-volume-create'), handler: async () => notSupported() });
  app.route({ method: ['PUT', 'POST'], url: '/v1/volume/host/register', ...acl.ns('host-volume-register'), handler: async () => notSupported() });
  app.get('/v1/volume/host/:id', acl.ns('host-volume-read'), async () => {
    throw notFound('volume');
  });
  app.delete('/v1/volume/host/:id', acl.ns('host-volume-delete'), async () => notSupported());
}
