/**
 * `GET /v1/agent/pprof/<profile>` (`?seconds=`, `?debug=`, `?node_id=` or `?server_id=`): this
 * agent's runtime profiles — or a named client's or server's, forwarded there — as Node.js can
 * give them (debug/agent-profile.ts), for `nomad operator debug` and `caravan operator debug`.
 * Nomad's rules: with ACLs on, the token needs agent:write; with ACLs off, the agent must run
 * with `enable_debug` (-dev does), else 403 "Permission denied". The answer is a file
 * (Content-Disposition names it), as Nomad's.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { acl } from '../acl/route-acl.js';
import { permissionDenied } from '../acl/acl-gate.js';
import { agentTarget } from '../forward/agent-target.js';
import { forwardHttp } from '../forward/http-forward.js';
import { queryParam, type RawQuery } from '../query-options.js';
import { requestSignal, type RouteContext } from '../route-context.js';
import { takeAgentProfile } from '../../debug/agent-profile.js';

/** The longest recording a request may ask for; a longer one is cut to this. */
const MAX_PROFILE_SECONDS = 300;

/** A query integer as Go's strconv.Atoi with the error dropped (Nomad's net/pprof behaviour): 0 when absent or bad. */
function atoi(q: RawQuery, name: string): number {
  const v = queryParam(q, name);
  return v !== undefined && /^[+-]?\d+$/.test(v) ? Number(v) : 0;
}

/**
 * Nomad's rule for profiles: with ACLs on the route's agent:write decided already; with ACLs
 * off only an agent started with enable_debug serves them.
 */
export function requireDebugAllowed(ctx: RouteContext): void {
  if (!ctx.gate.enabled && ctx.agent.enableDebug !== true) throw permissionDenied();
}

/** Registers /v1/agent/pprof/*. */
export function registerAgentPprofRoutes(app: FastifyInstance, ctx: RouteContext): void {
  app.get('/v1/agent/pprof/:profile', acl.rule('agent', 'write'), async (req: FastifyRequest<{ Params: { profile: string } }>, reply: FastifyReply) => {
    requireDebugAllowed(ctx);
    const q = req.query as RawQuery;
    const target = agentTarget(ctx, queryParam(q, 'node_id') ?? '', queryParam(q, 'server_id') ?? '', req.headers);
    if (target.kind === 'remote') return forwardHttp(req, reply, target.remote, ctx.tls);
    const seconds = Math.min(MAX_PROFILE_SECONDS, Math.max(1, atoi(q, 'seconds')));
    const profile = await takeAgentProfile(req.params.profile, { seconds, debug: atoi(q, 'debug'), signal: requestSignal(req, reply, ctx.shutdown.signal) });
    reply
      .header('X-Content-Type-Options', 'nosniff')
      .header('Content-Type', profile.contentType)
      .header('Content-Disposition', `attachment; filename="${profile.filename}"`);
    return reply.send(profile.body);
  });
}
