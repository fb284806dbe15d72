/**
 * Allocation lifecycle on the client: `PUT|POST /v1/client/allocation/:id/restart`
 * ({TaskName, AllTasks}), `…/signal` ({Task, Signal}) and `GET …/stats` (Nomad's
 * AllocResourceUsage). Forwarded to the client holding the allocation when it is elsewhere.
 */
import { constants as osConstants } from 'node:os';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { TaskResourceUsage } from '../../drivers/driver.js';
import type { ClientHttpApi } from '../client-http-api.js';
import { forwardHttp } from '../forward/http-forward.js';
import { requestTarget } from '../forward/request-target.js';
import { badRequest } from '../http-errors.js';
import { queryParam, type RawQuery } from '../query-options.js';
import { optionalBool, optionalObjectBody, optionalString } from '../request-body.js';
import { sendJson, type RouteContext } from '../route-context.js';
import { acl } from '../acl/route-acl.js';

type AllocReq = FastifyRequest<{ Params: { id: string }; Querystring: RawQuery }>;

/** Nomad's MemoryStats. */
export interface MemoryStats {
  RSS: number;
  Cache: number;
  Swap: number;
  MappedFile: number;
  Usage: number;
  MaxUsage: number;
  KernelUsage: number;
  KernelMaxUsage: number;
  Measured: string[];
}

/** Nomad's CpuStats. */
export interface CpuStats {
  SystemMode: number;
  UserMode: number;
  TotalTicks: number;
  ThrottledPeriods: number;
  ThrottledTime: number;
  Percent: number;
  Measured: string[];
}

/** Nomad's ResourceUsage. */
export interface ResourceUsage {
  MemoryStats: MemoryStats;
  CpuStats: CpuStats;
  DeviceStats: unknown[];
}

/** Nomad's TaskResourceUsage. */
export interface ApiTaskResourceUsage {
  ResourceUsage: ResourceUsage;
  /** Unix nanoseconds. */
  Timestamp: number;
  Pids: Record<string, ResourceUsage> | null;
}

/** Nomad's AllocResourceUsage: the sum over tasks, and each task. */
export interface AllocResourceUsage {
  ResourceUsage: ResourceUsage;
  Tasks: Record<string, ApiTaskResourceUsage>;
  Timestamp: number;
}

function usage(rss: number, ticks: number, percent: number): ResourceUsage {
  return {
    MemoryStats: { RSS: rss, Cache: 0, Swap: 0, MappedFile: 0, Usage: 0, MaxUsage: 0, KernelUsage: 0, KernelMaxUsage: 0, Measured: ['RSS'] },
    CpuStats: { SystemMode: 0, UserMode: 0, TotalTicks: ticks, ThrottledPeriods: 0, ThrottledTime: 0, Percent: percent, Measured: ['Percent', 'Total Ticks'] },
    DeviceStats: [],
  };
}

/** Builds Nomad's AllocResourceUsage from the drivers' per-task usage. */
export function allocResourceUsage(tasks: Record<string, TaskResourceUsage>): AllocResourceUsage {
  const out: AllocResourceUsage = { ResourceUsage: usage(0, 0, 0), Tasks: {}, Timestamp: 0 };
  let rss = 0;
  let ticks = 0;
  let percent = 0;
  for (const [name, t] of Object.entries(tasks)) {
    out.Tasks[name] = { ResourceUsage: usage(t.memoryRssBytes, t.cpuTotalTicks, t.cpuPercent), Timestamp: t.timestamp, Pids: null };
    rss += t.memoryRssBytes;
    ticks += t.cpuTotalTicks;
    percent += t.cpuPercent;
    out.Timestamp = Math.max(out.Timestamp, t.timestamp);
  }
  out.ResourceUsage = usage(rss, ticks, percent);
  return out;
}

/** Validates a signal name; "" means Nomad's default, SIGKILL. Accepts "USR1" for "SIGUSR1". */
export function normalizeSignal(raw: string): string {
  if (raw === '') return 'SIGKILL';
  const name = raw.toUpperCase().startsWith('SIG') ? raw.toUpperCase() : `SIG${raw.toUpperCase()}`;
  if (!(name in osConstants.signals)) throw badRequest(`invalid value for "Signal": ${JSON.stringify(raw)} is not a known signal`);
  return name;
}

/** Registers restart, signal and stats. */
export function registerClientAllocRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const local = (handler: (req: AllocReq, reply: FastifyReply, client: ClientHttpApi) => Promise<unknown>) =>
    async (req: AllocReq, reply: FastifyReply) => {
      const target = requestTarget(ctx, req.params.id, req.headers);
      if (target.kind === 'remote') return forwardHttp(req, reply, target.remote, ctx.tls);
      return handler(req, reply, target.client);
    };
  const pretty = (req: AllocReq) => queryParam(req.query, 'pretty') !== undefined;

  const restart = local(async (req, reply, client) => {
    const body = optionalObjectBody(req.body);
    const task = optionalString(body, 'TaskName');
    const all = optionalBool(body, 'AllTasks');
    if (task !== '' && all) throw badRequest('TaskName and AllTasks are mutually exclusive');
    await client.restartAlloc(req.params.id, task === '' ? undefined : task);
    return sendJson(reply, {}, pretty(req));
  });
  app.put('/v1/client/allocation/:id/restart', acl.ns('alloc-lifecycle', 'alloc'), restart);
  app.post('/v1/client/allocation/:id/restart', acl.ns('alloc-lifecycle', 'alloc'), restart);

  const signal = local(async (req, reply, client) => {
    const body = optionalObjectBody(req.body);
    const task = optionalString(body, 'Task');
    const sig = normalizeSignal(optionalString(body, 'Signal'));
    await client.signalAlloc(req.params.id, task === '' ? undefined : task, sig);
    return sendJson(reply, {}, pretty(req));
  });
  app.put('/v1/client/allocation/:id/signal', acl.ns('alloc-lifecycle', 'alloc'), signal);
  app.post('/v1/client/allocation/:id/signal', acl.ns('alloc-lifecycle', 'alloc'), signal);

  app.get('/v1/client/allocation/:id/stats', acl.ns('read-job', 'alloc'), local(async (req, reply, client) => {
    return sendJson(reply, allocResourceUsage(await client.allocStats(req.params.id)), pretty(req));
  }));
}
