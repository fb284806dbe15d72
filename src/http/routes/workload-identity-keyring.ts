/**
 * The routes of Nomad's workload-identity root keyring and its public documents:
 * - `GET /.well-known/jwks.json` → the public keys that verify identities (no ACL, as Nomad);
 * - `GET /.well-known/openid-configuration` → the OIDC discovery document, when the server has an
 *   `oidc_issuer` (Nomad refuses it without one);
 * - `GET /v1/operator/keyring/keys` → every key's metadata (management);
 * - `PUT|POST /v1/operator/keyring/rotate` → a new active key (management);
 * - `DELETE /v1/operator/keyring/key/:id` → removes an inactive key (management).
 * Every answer is built from key metadata and public keys only: no route can serve a private key.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { acl } from '../acl/route-acl.js';
import { HttpError, badRequest } from '../http-errors.js';
import { answerRead, answerWrite, queryOptions, requireServer, sendJson, type RouteContext } from '../route-context.js';
import type { ServerApi } from '../../server/server-api.js';
import { Table } from '../../server/state/state-reader.js';

type Keyring = NonNullable<ServerApi['keyring']>;

function keyringOf(ctx: RouteContext): Keyring {
  const k = requireServer(ctx).keyring;
  if (!k) throw new HttpError('HTTP_NOT_SUPPORTED', { feature: 'the workload identity keyring' });
  return k;
}

/** A boolean query flag as Nomad reads it (`?full`, `?full=true`). */
function flag(req: FastifyRequest, name: string): boolean {
  const raw = (req.query as Record<string, unknown>)[name];
  const v = Array.isArray(raw) ? raw[0] : raw;
  if (v === undefined) return false;
  if (v === '' || v === 'true' || v === '1') return true;
  if (v === 'false' || v === '0') return false;
  throw badRequest(`${name} must be true or false, got ${JSON.stringify(v)}`);
}

/** Registers the keyring and .well-known routes. */
export function registerWorkloadIdentityKeyringRoutes(app: FastifyInstance, ctx: RouteContext): void {
  app.get('/.well-known/jwks.json', acl.public(), (req, reply) =>
    answerRead(ctx, req, reply, [Table.RootKeys], () => ({ keys: keyringOf(ctx).jwks().keys })),
  );
  app.get('/.well-known/openid-configuration', acl.public(), (req, reply) => {
    const issuer = keyringOf(ctx).issuer();
    if (issuer === '') throw new HttpError('HTTP_NOT_SUPPORTED', { feature: 'OIDC discovery without the server\'s oidc_issuer' });
    const base = issuer.replace(/\/+$/, '');
    return sendJson(
      reply,
      {
        issuer,
        jwks_uri: `${base}/.well-known/jwks.json`,
        id_token_signing_alg_values_supported: ['RS256'],
        response_types_supported: ['code'],
        subject_types_supported: ['public'],
      },
      queryOptions(req).pretty,
    );
  });
  app.get('/v1/operator/keyring/keys', acl.management(), (req, reply) => answerRead(ctx, req, reply, [Table.RootKeys], () => keyringOf(ctx).list().keys));
  app.route({
    method: ['PUT', 'POST'],
    url: '/v1/operator/keyring/rotate',
    ...acl.management(),
    handler: async (req, reply) => {
      const prepublish = (req.query as Record<string, unknown>)['prepublish'];
      const res = await keyringOf(ctx).rotate({ full: flag(req, 'full'), ...(typeof prepublish === 'string' ? { prepublish } : {}) });
      return answerWrite(req, reply, res.index, { Key: res.key, Index: res.index });
    },
  });
  app.delete<{ Params: { id: string } }>('/v1/operator/keyring/key/:id', acl.management(), async (req, reply) => {
    flag(req, 'force');
    const index = await keyringOf(ctx).remove(req.params.id);
    return answerWrite(req, reply, index, {});
  });
}
