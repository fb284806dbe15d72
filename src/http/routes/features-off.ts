/**
 * Endpoints of features Caravan does not run, answered as Nomad answers them when the feature
 * is off, so that its clients take their "disabled" path instead of failing on a 404:
 * - `/v1/acl/token/self` → Nomad's "acls-disabled" token (the web UI and CLI read it);
 *   every other `/v1/acl/…` route → 400 "ACL support disabled";
 * - `/v1/operator/license`, quotas, Sentinel policies and recommendations → 501 "Nomad
 *   Enterprise only endpoint", as Nomad's community edition answers them;
 * - CSI: Caravan runs no storage plugins, so the volume and plugin lists are empty and a named
 *   volume or plugin is not found (Nomad's web UI opens its Storage page on these lists).
 */
import { listHostVolumes } from './host-volumes.js';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { HttpError, notFound } from '../http-errors.js';
import { answerRead, queryOptions, sendJson, type RouteContext } from '../route-context.js';
import { Table } from '../../server/state/state-reader.js';
import { acl, need } from '../acl/route-acl.js';
import { GO_ZERO_TIME } from '../../structs/go-time.js';

/** Nomad's ACLsDisabledToken, in its ACLToken JSON shape. */
export const ACLS_DISABLED_TOKEN = {
  AccessorID: 'acls-disabled',
  SecretID: '',
  Name: 'ACLs disabled token',
  Type: 'client',
  Policies: null,
  Roles: null,
  Global: false,
  CreateTime: GO_ZERO_TIME,
  ExpirationTime: null,
  ExpirationTTL: 0,
  CreateIndex: 0,
  ModifyIndex: 0,
} as const;

/** Registers the ACL and license routes. */
export function registerFeaturesOffRoutes(app: FastifyInstance, ctx: RouteContext): void {
  // With ACLs on, the real ACL routes (routes/acl.ts) answer instead.
  if (!ctx.gate.enabled) registerAclOffRoutes(app);
  app.route({
    method: ['GET', 'PUT', 'POST'],
    url: '/v1/operator/license',
    ...acl.rule('operator', 'read'),
    handler: async () => {
      throw new HttpError('HTTP_ENTERPRISE_ONLY', {});
    },
  });
  // Enterprise-only in Nomad: node and job utilization reports, allocation pause.
  for (const url of ['/v1/operator/utilization', '/v1/allocation/:id/pause']) {
    app.route({
      method: ['GET', 'PUT', 'POST'],
      url,
      ...acl.token(),
      handler: async () => {
        throw new HttpError('HTTP_ENTERPRISE_ONLY', {});
      },
    });
  }
  // Caravan runs no Vault integration: nothing needs upgrading to workload identities.
  app.get('/v1/operator/upgrade-check/vault-workload-identity', acl.management(), (req, reply) =>
    answerRead(ctx, req, reply, [Table.Jobs], () => ({ JobsWithoutVaultIdentity: [], OutdatedNodes: [], VaultTokens: [] })),
  );
  for (const url of ['/v1/quotas', '/v1/quota-usages', '/v1/quota/*', '/v1/quota', '/v1/sentinel/policies', '/v1/sentinel/policy/*', '/v1/recommendations', '/v1/recommendation/*', '/v1/recommendation']) {
    app.route({
      method: ['GET', 'PUT', 'POST', 'DELETE'],
      url,
      ...acl.token(),
      handler: async () => {
        throw new HttpError('HTTP_ENTERPRISE_ONLY', {});
      },
    });
  }
  registerCsiOffRoutes(app, ctx);
}

function registerCsiOffRoutes(app: FastifyInstance, ctx: RouteContext): void {
  // Answered as lists (so `filter=`, `per_page` and blocking queries behave as on any list).
  // ?type=host lists dynamic host volumes (host-volumes.ts), under Nomad's host-volume-read.
  const isHostType = (req: FastifyRequest) => (req.query as Record<string, unknown>)['type'] === 'host';
  const volumeListNeed = (req: FastifyRequest) => need.ns(isHostType(req) ? 'host-volume-read' : 'csi-list-volume');
  app.get('/v1/volumes', acl.dynamic(volumeListNeed), (req, reply) =>
    isHostType(req)
      ? answerRead(ctx, req, reply, [Table.HostVolumes], (server, opts) => listHostVolumes(server, req, opts.namespace, opts.prefix))
      : answerRead(ctx, req, reply, [Table.Jobs], () => []),
  );
  app.get('/v1/plugins', acl.rule('plugin', 'list'), (req, reply) => answerRead(ctx, req, reply, [Table.Jobs], () => []));
  // Snapshots and external volumes are listed from a named CSI plugin: there is none.
  for (const url of ['/v1/volumes/snapshot', '/v1/volumes/external']) {
    app.route({
      method: ['GET', 'PUT', 'DELETE'],
      url,
      ...acl.ns('csi-list-volume'),
      handler: async () => {
        throw notFound('plugin');
      },
    });
  }
  app.get('/v1/volume/csi/*', acl.ns('csi-read-volume'), async () => {
    throw notFound('volume');
  });
  app.get('/v1/plugin/csi/*', acl.rule('plugin', 'read'), async () => {
    throw notFound('plugin');
  });
}

function registerAclOffRoutes(app: FastifyInstance): void {
  app.get('/v1/acl/token/self', acl.public(), (req, reply) => sendJson(reply, ACLS_DISABLED_TOKEN, queryOptions(req).pretty));
  app.route({
    method: ['GET', 'PUT', 'POST', 'DELETE'],
    url: '/v1/acl/*',
    ...acl.public(),
    handler: async () => {
      throw new HttpError('HTTP_ACL_DISABLED', {});
    },
  });
}
