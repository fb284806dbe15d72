/**
 * `GET /v1/agent/monitor/export` (Nomad 1.10+, `nomad monitor export`): an agent's past log —
 * with `on_disk=true` the whole active file of its own `log_file`, or with `service_name=` its
 * systemd journal (`journalctl --unit … --since "<logs_since> ago"`, `follow=true` to keep
 * streaming) — as JSON frames `{"Data": <base64>}` or, with `plain=true`, raw text. `node_id` or
 * `server_id` sends it to that agent. agent:read, as Nomad's.
 *
 * Which file is read is the agent's configuration, never the request's: no parameter names a
 * path, and a service name must be a systemd unit name (Nomad's check, the name containing
 * "caravan" or "nomad"), passed to journalctl as one `--unit=` argument.
 */
import { spawn } from 'node:child_process';
import { constants, createReadStream } from 'node:fs';
import { access } from 'node:fs/promises';
import { PassThrough, type Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { acl } from '../acl/route-acl.js';
import { agentTarget } from '../forward/agent-target.js';
import { forwardHttp } from '../forward/http-forward.js';
import { HttpError, badRequest } from '../http-errors.js';
import { queryParam, type RawQuery } from '../query-options.js';
import { requestSignal, type RouteContext } from '../route-context.js';
import { parseDuration } from '../../structs/duration.js';

const SYSTEMD_SUFFIXES = ['service', 'socket', 'device', 'mount', 'automount', 'swap', 'target', 'path', 'timer', 'slice', 'scope'];

/**
 * Nomad's ScanServiceName, for Caravan's unit names: at most 255 characters, naming caravan (or
 * nomad), a known unit suffix if any, and only systemd's name characters; never starting with
 * "-" (journalctl would read it as a flag). Returns the problem, or undefined when acceptable.
 */
export function serviceNameProblem(name: string): string | undefined {
  if (name.length > 255) return 'service name too long';
  if (!name.includes('caravan') && !name.includes('nomad')) return "service name must include 'caravan' or 'nomad'";
  if (name.startsWith('-')) return `${name} does not meet systemd conventions`;
  const parts = name.split('.');
  let prefix = name;
  if (parts.length >= 2) {
    if (!SYSTEMD_SUFFIXES.includes(parts[parts.length - 1]!)) return 'invalid suffix';
    prefix = parts.slice(0, -1).join('');
  }
  return /^[\w\\._-]*(@[\w\\._-]+)?$/.test(prefix) ? undefined : `${prefix} does not meet systemd conventions`;
}

/** A Go-style boolean parameter (strconv.ParseBool), undefined when absent; Nomad's 400 text otherwise. */
function boolParam(q: RawQuery, name: string, label: string): boolean | undefined {
  const v = queryParam(q, name);
  if (v === undefined || v === '') return undefined;
  if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(v)) return true;
  if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(v)) return false;
  throw badRequest(`Unknown value for ${label}: strconv.ParseBool: parsing ${JSON.stringify(v)}: invalid syntax`);
}

/** journalctl's `--since` text for a Go duration ("72h" → "259200 seconds ago"). */
function sinceArg(logsSince: string): string {
  return `${Math.floor(parseDuration(logsSince) / 1e9)} seconds ago`;
}

/** Where the exported lines come from: the agent's log file, or the journal of a unit. */
function exportSource(logFile: string, serviceName: string, logsSince: string, follow: boolean, signal: AbortSignal): Readable {
  if (logFile !== '') return createReadStream(logFile);
  const args = ['--no-pager', '-x', `--unit=${serviceName}`, '--since', sinceArg(logsSince), ...(follow ? ['-f'] : [])];
  const child = spawn('journalctl', args, { stdio: ['ignore', 'pipe', 'pipe'], signal });
  // Its output and its complaints alike, as Nomad's MultiReader; the stream ends with the process.
  const out = new PassThrough();
  child.stdout.pipe(out, { end: false });
  child.stderr.pipe(out, { end: false });
  child.on('close', () => out.end());
  child.on('error', (err) => out.destroy(err));
  return out;
}

/** Registers /v1/agent/monitor/export. */
export function registerAgentMonitorExportRoutes(app: FastifyInstance, ctx: RouteContext): void {
  app.get('/v1/agent/monitor/export', acl.rule('agent', 'read'), async (req: FastifyRequest, reply: FastifyReply) => {
    const q = req.query as RawQuery;
    const onDisk = boolParam(q, 'on_disk', 'on-disk') ?? false;
    const follow = boolParam(q, 'follow', 'follow') ?? false;
    const plain = boolParam(q, 'plain', 'plain') ?? false;
    const logsSince = queryParam(q, 'logs_since') || '72h';
    try {
      parseDuration(logsSince);
    } catch (err) {
      throw badRequest(`Unknown value for logs-since: ${(err as Error).message}`);
    }
    const serviceName = queryParam(q, 'service_name') ?? '';
    const nodeId = queryParam(q, 'node_id') ?? '';
    const serverId = queryParam(q, 'server_id') ?? '';
    const target = agentTarget(ctx, nodeId, serverId, req.headers);
    if (target.kind === 'remote') return forwardHttp(req, reply, target.remote, ctx.tls);

    const logFile = ctx.agent.logFile ?? '';
    if (onDisk && logFile === '') throw badRequest('No log file defined: this agent runs without log_file');
    if (onDisk && serviceName !== '') throw badRequest('Cannot target journald and nomad log file simultaneously');
    if (onDisk && follow) throw badRequest('Cannot follow log file');
    if (!onDisk && serviceName === '') throw badRequest('Nothing to export: give on_disk=true (the agent\'s log_file) or service_name (its systemd unit)');
    if (serviceName !== '') {
      const problem = serviceNameProblem(serviceName);
      if (problem) throw new HttpError('HTTP_UNPROCESSABLE', { reason: problem });
    }

    if (onDisk) {
      try {
        await access(logFile, constants.R_OK);
      } catch (err) {
        throw new HttpError('HTTP_INTERNAL', { reason: `cannot read the log file ${logFile}: ${(err as Error).message}` });
      }
    }
    const signal = requestSignal(req, reply, ctx.shutdown.signal);
    const source = exportSource(onDisk ? logFile : '', serviceName, logsSince, follow, signal);
    reply.hijack();
    const raw = reply.raw;
    raw.writeHead(200, { 'Content-Type': plain ? 'text/plain' : 'application/json' });
    await new Promise<void>((resolve) => {
      const done = (): void => {
        source.destroy();
        if (!raw.writableEnded) raw.end();
        resolve();
      };
      source.on('data', (chunk: Buffer) => {
        if (raw.destroyed) return;
        raw.write(plain ? chunk : JSON.stringify({ Data: chunk.toString('base64') }));
      });
      source.on('end', done);
      source.on('error', done);
      signal.addEventListener('abort', done, { once: true });
    });
  });
}
