/**
 * The routes of Nomad's workload-identity root keyring and its public documents. Caravan signs
 * no workload identity tokens yet, so it holds no root keys:
 * - `GET /.well-known/jwks.json` → `{"keys": []}`, a valid empty key set: no token verifies;
 * - `GET /.well-known/openid-configuration`, `GET /v1/operator/keyring/keys`,
 *   `PUT|POST /v1/operator/keyring/rotate`, `DELETE /v1/operator/keyring/key/:id` → 501 naming
 *   the missing keyring. Nomad never answers its key list empty (a leader creates its first
 *   key when it takes office), and an OIDC discovery document would advertise an issuer that
 *   issues nothing.
 */
import type { FastifyInstance } from 'fastify';
import { acl } from '../acl/route-acl.js';
import { HttpError } from '../http-errors.js';
import { queryOptions, sendJson } from '../route-context.js';

const NO_KEYRING = 'the workload identity keyring (Caravan signs no workload identity tokens yet)';

function notSupported(): never {
  throw new HttpError('HTTP_NOT_SUPPORTED', { feature: NO_KEYRING });
}

/** Registers the keyring and .well-known routes. */
export function registerWorkloadIdentityKeyringRoutes(app: FastifyInstance): void {
  app.get('/.well-known/jwks.json', acl.public(), (req, reply) => sendJson(reply, { keys: [] }, queryOptions(req).pretty));
  app.get('/.well-known/openid-configuration', acl.public(), async () => notSupported());
  app.get('/v1/operator/keyring/keys', acl.management(), async () => notSupported());
  app.route({ method: ['PUT', 'POST'], url: '/v1/operator/keyring/rotate', ...acl.management(), handler: async () => notSupported() });
  app.delete('/v1/operator/keyring/key/:id', acl.management(), async () => notSupported());
}
