/**
 * `GET/PUT/POST /v1/operator/scheduler/configuration`: Nomad's SchedulerConfiguration. GET
 * answers {SchedulerConfig, Index, …} and blocks on the configuration; PUT replaces it
 * (`?cas=<ModifyIndex>` for check-and-set) and answers {Updated, Index}. A malformed field is a
 * 400 naming it, and nothing changes.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Table } from '../../server/state/state-reader.js';
import { parseSchedulerConfig, SchedulerConfigProblem } from '../../structs/scheduler-config.js';
import { CaravanError } from '../../structs/caravan-error.js';
import { HttpError, badRequest } from '../http-errors.js';
import { queryParam, type RawQuery } from '../query-options.js';
import { objectBody } from '../request-body.js';
import { answerRead, answerWrite, requireServer, type RouteContext } from '../route-context.js';
import { acl } from '../acl/route-acl.js';

/** Registers the scheduler configuration routes. */
export function registerSchedulerConfigRoutes(app: FastifyInstance, ctx: RouteContext): void {
  app.get('/v1/operator/scheduler/configuration', acl.rule('operator', 'read'), (req, reply) =>
    answerRead(ctx, req, reply, [Table.SchedulerConfig], (server) => {
      if (!server.schedulerConfig) throw new HttpError('HTTP_NOT_SUPPORTED', { feature: 'scheduler configuration' });
      const config = server.schedulerConfig();
      return { SchedulerConfig: config, Index: Math.max(1, config.ModifyIndex), LastContact: 0, KnownLeader: true };
    }),
  );

  const put = async (req: FastifyRequest, reply: FastifyReply) => {
    const server = requireServer(ctx);
    if (!server.setSchedulerConfig) throw new HttpError('HTTP_NOT_SUPPORTED', { feature: 'scheduler configuration' });
    const parsed = parseSchedulerConfig(objectBody(req.body));
    if (parsed instanceof SchedulerConfigProblem) throw new CaravanError('SCHEDULER_CONFIG_INVALID', { field: parsed.field, reason: parsed.reason });
    const rawCas = queryParam(req.query as RawQuery, 'cas');
    let cas: number | undefined;
    if (rawCas !== undefined && rawCas !== '') {
      if (!/^\d+$/.test(rawCas)) throw badRequest(`invalid value for "cas": ${JSON.stringify(rawCas)} (want a non-negative integer)`);
      cas = Number(rawCas);
    }
    const res = await server.setSchedulerConfig(parsed, cas);
    return answerWrite(req, reply, res.index, { Updated: res.updated, Index: res.index });
  };
  app.put('/v1/operator/scheduler/configuration', acl.rule('operator', 'write'), put);
  app.post('/v1/operator/scheduler/configuration', acl.rule('operator', 'write'), put);
}
