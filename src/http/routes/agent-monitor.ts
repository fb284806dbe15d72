/**
 * `GET /v1/agent/monitor` (`log_level` trace|debug|info|warn|error, `log_json`, `plain`,
 * `node_id` or `server_id` to follow another agent's, forwarded there): this agent's log lines as they are written, as Nomad streams them — JSON frames `{"Data": <base64>}`
 * one after the other (what its Go client's Agent().Monitor decodes), or the raw text with
 * `plain=true`. The stream ends when the caller goes away, the agent stops, or the token it was
 * opened with is deleted or expires (or loses agent:read).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Level } from 'pino';
import { acl } from '../acl/route-acl.js';
import { badRequest, HttpError } from '../http-errors.js';
import { canMonitor, formatLogLine, subscribeLogs } from '../log-monitor.js';
import { agentTarget } from '../forward/agent-target.js';
import { forwardHttp } from '../forward/http-forward.js';
import { queryFlag, queryParam, type RawQuery } from '../query-options.js';
import { requestSignal, type RouteContext } from '../route-context.js';

const LEVELS: readonly Level[] = ['trace', 'debug', 'info', 'warn', 'error'];

/** Registers /v1/agent/monitor. */
export function registerAgentMonitorRoutes(app: FastifyInstance, ctx: RouteContext): void {
  app.get('/v1/agent/monitor', acl.rule('agent', 'read'), async (req: FastifyRequest, reply: FastifyReply) => {
    const q = req.query as RawQuery;
    const raw = (queryParam(q, 'log_level') ?? 'info').toLowerCase();
    const level = LEVELS.find((l) => l === raw);
    if (!level) throw badRequest(`invalid log_level ${JSON.stringify(raw)}: want one of ${LEVELS.join(', ')}`);
    // `node_id` / `server_id` follow another agent's log (`nomad operator debug` does, per agent).
    const target = agentTarget(ctx, queryParam(q, 'node_id') ?? '', queryParam(q, 'server_id') ?? '', req.headers);
    if (target.kind === 'remote') return forwardHttp(req, reply, target.remote, ctx.tls);
    if (!canMonitor(ctx.logger)) throw new HttpError('HTTP_NOT_SUPPORTED', { feature: 'log monitoring of this agent' });
    const json = queryFlag(q, 'log_json');
    const plain = queryFlag(q, 'plain');
    const signal = requestSignal(req, reply, ctx.shutdown.signal);
    ctx.gate.holdRequest(req, reply, () => reply.raw.destroy());
    reply.hijack();
    const raw_ = reply.raw;
    raw_.writeHead(200, { 'Content-Type': plain ? 'text/plain' : 'application/json' });
    raw_.flushHeaders();
    await new Promise<void>((resolve) => {
      const unsubscribe = subscribeLogs(ctx.logger, level, (line) => {
        if (raw_.destroyed) return;
        const text = json ? line : formatLogLine(line);
        raw_.write(plain ? text : JSON.stringify({ Data: Buffer.from(text).toString('base64') }));
      });
      const done = (): void => {
        unsubscribe();
        raw_.end();
        resolve();
      };
      if (signal.aborted) done();
      else signal.addEventListener('abort', done, { once: true });
    });
  });
}
