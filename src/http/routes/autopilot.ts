/**
 * Autopilot, as Nomad's operator API answers it:
 * - `GET /v1/operator/autopilot/configuration`: the AutopilotConfiguration (durations as Go
 *   duration strings), blocking on it; `PUT` replaces it whole (`?cas=<ModifyIndex>` for
 *   check-and-set) and answers a bare `true`/`false`, as Nomad. operator:read / operator:write.
 * - `GET /v1/operator/autopilot/health`: the servers' health from the leader's view (Nomad's
 *   OperatorHealthReply), answered 429 when a server is unhealthy, as Nomad.
 *
 * What health means on Caravan: the servers share one log (embedded, or etcd), so a server is
 * healthy while its membership holds — on etcd, while its lease is kept alive, which the lease
 * TTL bounds; a server whose lease lapsed is `failed` and unhealthy. The leader reports its own
 * applied index and its own last contact (0); the other servers' log position and contact are
 * not visible to it (they read the log from etcd, not from the leader), so they are reported as
 * 0. Every server can lead while one is alive, so FailureTolerance is the healthy servers minus one.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Table } from '../../server/state/state-reader.js';
import { autopilotConfigJson, AutopilotConfigProblem, parseAutopilotConfig } from '../../structs/autopilot-config.js';
import { CaravanError } from '../../structs/caravan-error.js';
import { acl } from '../acl/route-acl.js';
import { HttpError, badRequest } from '../http-errors.js';
import { queryParam, type RawQuery } from '../query-options.js';
import { objectBody } from '../request-body.js';
import { answerRead, answerWrite, queryOptions, requireServer, sendJson, setQueryMeta, type RouteContext } from '../route-context.js';
import { clusterMembers } from './operator.js';
import type { OperatorHealthReply, ServerHealth } from '../../structs/operator-health.js';

const CONFIG_PATH = '/v1/operator/autopilot/configuration';

/** Registers the autopilot routes. */
export function registerAutopilotRoutes(app: FastifyInstance, ctx: RouteContext): void {
  app.get(CONFIG_PATH, acl.rule('operator', 'read'), (req, reply) =>
    answerRead(ctx, req, reply, [Table.AutopilotConfig], (server) => {
      if (!server.autopilotConfig) throw new HttpError('HTTP_NOT_SUPPORTED', { feature: 'autopilot configuration' });
      return autopilotConfigJson(server.autopilotConfig());
    }),
  );

  const put = async (req: FastifyRequest, reply: FastifyReply) => {
    const server = requireServer(ctx);
    if (!server.setAutopilotConfig) throw new HttpError('HTTP_NOT_SUPPORTED', { feature: 'autopilot configuration' });
    const parsed = parseAutopilotConfig(objectBody(req.body, 'autopilot configuration'));
    if (parsed instanceof AutopilotConfigProblem) throw new CaravanError('AUTOPILOT_CONFIG_INVALID', { field: parsed.field, reason: parsed.reason });
    const rawCas = queryParam(req.query as RawQuery, 'cas');
    let cas: number | undefined;
    if (rawCas !== undefined) {
      if (!/^\d+$/.test(rawCas)) throw badRequest(`Error parsing cas value: ${JSON.stringify(rawCas)} is not a non-negative integer`);
      cas = Number(rawCas);
    }
    const res = await server.setAutopilotConfig(parsed, cas);
    // Nomad answers true for a plain PUT, and whether the check-and-set applied for a CAS one.
    return answerWrite(req, reply, res.index, cas === undefined ? true : res.updated);
  };
  app.put(CONFIG_PATH, acl.rule('operator', 'write'), put);

  /** When each server's Healthy last changed, as this server has seen it (Nomad's StableSince). */
  const stable = new Map<string, { healthy: boolean; since: string }>();
  app.get('/v1/operator/autopilot/health', acl.rule('operator', 'read'), (req, reply) => {
    const server = requireServer(ctx);
    const now = new Date(ctx.clock.now());
    now.setUTCMilliseconds(0);
    const nowText = now.toISOString().replace('.000Z', 'Z');
    const leaderHere = server.isLeader();
    const servers: ServerHealth[] = clusterMembers(server, ctx.agent).map((m) => {
      const alive = m.status === 'alive';
      const self = m.leader && leaderHere;
      const seen = stable.get(m.id);
      if (!seen || seen.healthy !== alive) stable.set(m.id, { healthy: alive, since: nowText });
      return {
        ID: m.id,
        Name: `${m.name}.${ctx.agent.region}`,
        Address: m.address,
        SerfStatus: m.status,
        Version: self ? ctx.agent.version : '',
        Leader: m.leader,
        LastContact: '0s',
        LastTerm: 0,
        LastIndex: self ? server.state.latestIndex() : 0,
        Healthy: alive,
        Voter: alive,
        StableSince: stable.get(m.id)?.since ?? nowText,
      };
    });
    const healthy = servers.filter((s) => s.Healthy).length;
    const body: OperatorHealthReply = {
      Healthy: servers.length > 0 && healthy === servers.length,
      FailureTolerance: Math.max(0, healthy - 1),
      Servers: servers,
      Leader: servers.find((s) => s.Leader)?.ID ?? '',
      Voters: servers.filter((s) => s.Voter).map((s) => s.ID),
    };
    setQueryMeta(reply, Math.max(1, server.state.latestIndex()), server);
    return sendJson(reply, body, queryOptions(req).pretty, body.Healthy ? 200 : 429);
  });
}
