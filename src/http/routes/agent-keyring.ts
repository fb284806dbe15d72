/**
 * The gossip keyring routes of Nomad's agent API (`nomad operator gossip keyring`):
 * `GET /v1/agent/keyring/list` and `PUT|POST /v1/agent/keyring/{install,use,remove}` with
 * `{"Key": "<base64>"}`. Caravan's servers do not gossip (they find each other through their
 * shared log backend), so they answer as a Nomad cluster whose gossip encryption is off: Serf
 * asks every server, every one reports failure ("Keyring is empty (encryption not enabled)"),
 * and the agent answers 500 "N/N nodes reported failure". A key that is not base64 fails before
 * any server is asked, with Go's base64 error, as in Serf. agent:write for all four, as Nomad's.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { acl } from '../acl/route-acl.js';
import { HttpError } from '../http-errors.js';
import { objectBody } from '../request-body.js';
import { requireServer, type RouteContext } from '../route-context.js';
import { clusterMembers } from './operator.js';

const KEYRING_OPS = ['list', 'install', 'use', 'remove'] as const;

const BASE64_CHAR = /[A-Za-z0-9+/]/;

/**
 * Where Go's base64.StdEncoding would first fail on `key`, or -1 when it decodes: an illegal
 * character's offset, or the start of the incomplete last group.
 */
export function base64ErrorOffset(key: string): number {
  let end = key.length;
  while (end > 0 && key[end - 1] === '=' && key.length - end < 2) end--;
  for (let i = 0; i < end; i++) if (!BASE64_CHAR.test(key[i]!)) return i;
  if (key.length % 4 !== 0) return key.length - (key.length % 4);
  return -1;
}

/** The key of an install, use or remove body; "" when absent (Serf decodes it to no bytes). */
function keyOf(req: FastifyRequest): string {
  const body = req.body === undefined || req.body === null || req.body === '' ? {} : objectBody(req.body);
  const key = body['Key'];
  return typeof key === 'string' ? key : '';
}

/** Registers /v1/agent/keyring/*. */
export function registerAgentKeyringRoutes(app: FastifyInstance, ctx: RouteContext): void {
  for (const op of KEYRING_OPS) {
    app.route({
      method: op === 'list' ? ['GET'] : ['PUT', 'POST'],
      url: `/v1/agent/keyring/${op}`,
      ...acl.rule('agent', 'write'),
      handler: async (req) => {
        const server = requireServer(ctx);
        if (op !== 'list') {
          const offset = base64ErrorOffset(keyOf(req));
          if (offset >= 0) throw new HttpError('HTTP_GOSSIP_KEY_INVALID', { offset });
        }
        const nodes = clusterMembers(server, ctx.agent).filter((m) => m.status === 'alive').length;
        throw new HttpError('HTTP_GOSSIP_KEYRING_DISABLED', { failed: nodes, nodes });
      },
    });
  }
}
