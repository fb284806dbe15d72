/**
 * Job routes: /v1/jobs (list, register, parse) and /v1/job/<id>[/<sub-resource>]. Job IDs may
 * contain "/" (periodic and dispatched children), so /v1/job/* is one route whose tail is
 * split on the known sub-resource names, as Nomad's own router does.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Table, jobRowsTableKey, type JobRowsTable } from '../../server/state/state-reader.js';
import type { ServerApi } from '../../server/server-api.js';
import type { QueryOptions } from '../query-options.js';
import { jobSummaryTableKey, jobTableKey, jobVersionsTableKey } from '../../server/state/object-tables.js';
import { allocStubView } from '../api-views/alloc-views.js';
import { evalView } from '../api-views/eval-views.js';
import { parseJobHcl } from '../../server/job-admission.js';
import { dispatchRoute, periodicForceRoute } from './job-dispatch.js';
import { versionTagRoute } from './job-version-tags.js';
import { versionDiffs } from './job-version-diffs.js';
import { parseSubmission, registerAnswer, revertRoute, scaleRoute, stableRoute, submissionRoute } from './job-actions.js';
import { badRequest, methodNotAllowed, notFound } from '../http-errors.js';
import { jobListStub } from '../api-views/job-views.js';
import { PageOrder, pagedList } from '../list-options.js';
import { queryFlag, type RawQuery } from '../query-options.js';
import { objectBody, objectField, optionalBool, optionalObjectBody, optionalUint } from '../request-body.js';
import { answerRead, answerWrite, queryOptions, requireServer, sendJson, modifyIndex, type RouteContext } from '../route-context.js';
import { acl, need, type AclNeed } from '../acl/route-acl.js';
import { requestAcl } from '../acl/acl-gate.js';
import { deniedHostVolumeMount } from '../../acl/host-volume-mount-check.js';
import { HttpError } from '../http-errors.js';
import { GO_ZERO_TIME } from '../../structs/go-time.js';

/** Sub-resources of /v1/job/<id>/…, longest first so "deployments" wins over "deployment". */
const JOB_SUBRESOURCES = ['allocations', 'evaluations', 'versions', 'summary', 'deployments', 'deployment', 'plan', 'evaluate', 'dispatch', 'periodic/force', 'scale', 'revert', 'stable', 'submission', 'services', 'actions', 'action'] as const;
type JobSubresource = (typeof JOB_SUBRESOURCES)[number];

/**
 * Splits the tail of /v1/job/<tail> into the job ID and the sub-resource ("" for the job); a
 * version tag route (<id>/versions/<name>/tag) is sub "tag" with the tag's name.
 */
export function splitJobPath(tail: string): { jobId: string; sub: JobSubresource | 'tag' | ''; tag?: string } {
  const tagged = /^(.+)\/versions\/([^/]+)\/tag$/.exec(tail);
  if (tagged) return { jobId: tagged[1]!, sub: 'tag', tag: decodeURIComponent(tagged[2]!) };
  for (const sub of JOB_SUBRESOURCES) {
    if (tail.endsWith(`/${sub}`)) return { jobId: tail.slice(0, -(sub.length + 1)), sub };
  }
  return { jobId: tail, sub: '' };
}

/** Registers the job routes. */
export function registerJobRoutes(app: FastifyInstance, ctx: RouteContext): void {
  app.get('/v1/jobs', acl.ns('list-jobs'), (req, reply) =>
    answerRead(ctx, req, reply, [Table.Jobs, Table.JobSummaries], (server, opts) =>
      // Paged by namespace and ID ("default.web"), as Nomad's Job.List; stubs are made for the page only.
      pagedList(server.state.jobs(opts.namespace, opts.prefix || undefined), PageOrder.NamespaceId, (job) =>
        jobListStub(job, server.state.jobSummary(job.Namespace, job.ID)),
      ),
    ),
  );

  const register = async (req: FastifyRequest, reply: FastifyReply, pathJobId?: string) => {
    const server = requireServer(ctx);
    const body = objectBody(req.body);
    const opts = queryOptions(req);
    checkHostVolumeMounts(req, body['Job']);
    // The server admits the job (decode, canonicalize, validate): the one boundary for every caller.
    const res = await server.registerJob(objectField(body, 'Job'), {
      namespace: opts.namespace,
      pathJobId,
      enforceIndex: optionalBool(body, 'EnforceIndex'),
      jobModifyIndex: optionalUint(body, 'JobModifyIndex'),
      preserveCounts: optionalBool(body, 'PreserveCounts'),
      submission: parseSubmission(body),
    });
    return registerAnswer(req, reply, res);
  };
  app.put('/v1/jobs', acl.ns('submit-job', 'job-body'), (req, reply) => register(req, reply));
  app.post('/v1/jobs', acl.ns('submit-job', 'job-body'), (req, reply) => register(req, reply));

  // Nomad accepts PUT and POST (its Go client sends PUT).
  const parse = async (req: FastifyRequest, reply: FastifyReply) => {
    const body = objectBody(req.body);
    const hcl = body['JobHCL'];
    if (typeof hcl !== 'string' || hcl.trim() === '') throw badRequest('JobHCL must be specified');
    const job = await parseJobHcl(hcl, parseVariables(body['Variables']), optionalBool(body, 'Canonicalize'));
    return sendJson(reply, job, queryOptions(req).pretty);
  };
  app.put('/v1/jobs/parse', acl.ns('parse-job'), parse);
  app.post('/v1/jobs/parse', acl.ns('parse-job'), parse);

  app.route({
    method: ['GET', 'PUT', 'POST', 'DELETE'],
    url: '/v1/job/*',
    ...acl.dynamic(jobRouteNeed),
    handler: (req, reply) => {
      const tail = (req.params as Record<string, string>)['*'] ?? '';
      const { jobId, sub, tag } = splitJobPath(tail);
      if (jobId === '') throw badRequest('missing job ID');
      if (sub === 'tag') return versionTagRoute(ctx, req, reply, jobId, tag ?? '');
      return jobRoute(ctx, req, reply, jobId, sub, register);
    },
  });
}

/** Refuses (403, naming the volume) a job mounting a host volume the token's host_volume rules deny. */
function checkHostVolumeMounts(req: FastifyRequest, job: unknown): void {
  const r = requestAcl(req);
  if (!r) return;
  const denied = deniedHostVolumeMount(r.acl, job);
  if (denied) throw new HttpError('ACL_HOST_VOLUME_DENIED', { ...denied });
}

function parseVariables(v: unknown): Record<string, string> {
  if (v === undefined || v === null || v === '') return {};
  // Nomad sends Variables as HCL text ("name = \"value\"" lines); accept that and a JSON map.
  if (typeof v === 'object' && !Array.isArray(v)) {
    const out: Record<string, string> = {};
    for (const [k, val] of Object.entries(v as Record<string, unknown>)) out[k] = String(val);
    return out;
  }
  if (typeof v !== 'string') throw badRequest('Variables must be a string or an object');
  const out: Record<string, string> = {};
  for (const line of v.split('\n')) {
    const m = /^\s*([A-Za-z_][\w-]*)\s*=\s*(.*?)\s*$/.exec(line);
    if (!m) continue;
    const raw = m[2]!;
    out[m[1]!] = raw.startsWith('"') ? (JSON.parse(raw) as string) : raw;
  }
  return out;
}

/** The capability Nomad checks for each /v1/job/<id>/<sub> operation. */
export function jobRouteNeed(req: FastifyRequest): AclNeed {
  const { sub } = splitJobPath((req.params as Record<string, string>)['*'] ?? '');
  const write = req.method !== 'GET' && req.method !== 'HEAD';
  switch (sub) {
    case '':
      return write ? need.ns('submit-job', req.method === 'DELETE' ? 'query' : 'job-body') : need.ns('read-job');
    case 'plan':
      return need.ns('submit-job', 'job-body');
    case 'tag':
    case 'evaluate':
    case 'periodic/force':
    case 'revert':
    case 'stable':
      return need.ns('submit-job');
    case 'dispatch':
      return need.ns('dispatch-job');
    case 'scale':
      return write ? need.ns('scale-job') : need.ns('read-job-scaling');
    default:
      return need.ns('read-job');
  }
}

type RegisterFn = (req: FastifyRequest, reply: FastifyReply, pathJobId?: string) => Promise<FastifyReply>;



/**
 * Answers a read of one job's allocations, evaluations or deployments: waits on that job's rows of
 * `table` only (writes for other jobs wake none of its readers) and answers `table`'s index, as
 * Nomad's Job.Allocations, Job.Evaluations, Job.Deployments and Job.LatestDeployment do.
 */
function answerJobRows<T>(
  ctx: RouteContext,
  req: FastifyRequest,
  reply: FastifyReply,
  jobId: string,
  table: JobRowsTable,
  read: (server: ServerApi, opts: QueryOptions) => T,
): Promise<FastifyReply> {
  return answerRead(ctx, req, reply, (opts) => [jobRowsTableKey(table, opts.namespace, jobId)], read, () => requireServer(ctx).state.tableIndex(table));
}

async function jobRoute(
  ctx: RouteContext,
  req: FastifyRequest,
  reply: FastifyReply,
  jobId: string,
  sub: JobSubresource | '',
  register: RegisterFn,
): Promise<FastifyReply> {
  const method = req.method;
  const isWrite = method === 'PUT' || method === 'POST';
  switch (sub) {
    case '':
      if (method === 'GET') {
        // Waits on this job only: writes to other jobs wake none of its readers.
        return answerRead(ctx, req, reply, (opts) => [jobTableKey(opts.namespace, jobId)], (server, opts) => {
          const job = server.state.jobById(opts.namespace, jobId);
          if (!job) throw notFound('job');
          return job;
        }, modifyIndex);
      }
      if (isWrite) return register(req, reply, jobId);
      if (method === 'DELETE') {
        const server = requireServer(ctx);
        const opts = queryOptions(req);
        const purge = queryFlag(req.query as RawQuery, 'purge');
        const noShutdownDelay = queryFlag(req.query as RawQuery, 'no_shutdown_delay');
        if (!server.state.jobById(opts.namespace, jobId)) throw notFound('job');
        const res = await server.deregisterJob(opts.namespace, jobId, { purge, noShutdownDelay });
        return answerWrite(req, reply, res.index, {
          EvalID: res.evalId,
          EvalCreateIndex: res.evalCreateIndex,
          JobModifyIndex: res.jobModifyIndex,
          VolumeEvalID: '',
          VolumeEvalIndex: 0,
          Index: res.index,
          LastContact: 0,
          KnownLeader: true,
        });
      }
      throw methodNotAllowed(method, req.url);
    case 'allocations':
      if (method !== 'GET') throw methodNotAllowed(method, req.url);
      // Paged by ID, stubs built for the page only: the UI pages a job of 50,000 allocations 50 at a time.
      return answerJobRows(ctx, req, reply, jobId, Table.Allocs, (server, opts) => pagedList(server.state.allocsByJob(opts.namespace, jobId), PageOrder.Id, allocStubView));
    case 'evaluations':
      if (method !== 'GET') throw methodNotAllowed(method, req.url);
      return answerJobRows(ctx, req, reply, jobId, Table.Evals, (server, opts) => server.state.evalsByJob(opts.namespace, jobId).map(evalView));
    case 'versions':
      if (method !== 'GET') throw methodNotAllowed(method, req.url);
      // Waits on this job's versions only; the index is the highest ModifyIndex among them (the
      // version table's once there are none), as Nomad's GetJobVersions answers.
      return answerRead(ctx, req, reply, (opts) => [jobVersionsTableKey(opts.namespace, jobId)], (server, opts) => {
        const versions = server.state.jobVersions(opts.namespace, jobId);
        if (versions.length === 0) throw notFound('job');
        const index = server.state.tableIndex(jobVersionsTableKey(opts.namespace, jobId));
        return { Versions: versions, Diffs: versionDiffs(versions, req.query as RawQuery), Index: index, LastContact: 0, KnownLeader: true };
      });
    case 'summary':
      if (method !== 'GET') throw methodNotAllowed(method, req.url);
      // Waits on this job's summary only.
      return answerRead(ctx, req, reply, (opts) => [jobSummaryTableKey(opts.namespace, jobId)], (server, opts) => {
        const summary = server.state.jobSummary(opts.namespace, jobId);
        if (!summary) throw notFound('job summary');
        return summary;
      }, modifyIndex);
    case 'deployments':
      if (method !== 'GET') throw methodNotAllowed(method, req.url);
      return answerJobRows(ctx, req, reply, jobId, Table.Deployments, (server, opts) => server.state.deploymentsByJob(opts.namespace, jobId));
    case 'deployment':
      if (method !== 'GET') throw methodNotAllowed(method, req.url);
      return answerJobRows(ctx, req, reply, jobId, Table.Deployments, (server, opts) => {
        const all = server.state.deploymentsByJob(opts.namespace, jobId);
        // The latest deployment is the one created last.
        return all.reduce<(typeof all)[number] | null>((best, d) => (best === null || d.CreateIndex > best.CreateIndex ? d : best), null);
      });
    case 'plan': {
      if (!isWrite) throw methodNotAllowed(method, req.url);
      const server = requireServer(ctx);
      const body = objectBody(req.body);
      const res = await server.planJob(objectField(body, 'Job'), { namespace: queryOptions(req).namespace, pathJobId: jobId });
      return answerWrite(req, reply, res.index, {
        Annotations: { DesiredTGUpdates: res.annotations, PreemptedAllocs: null },
        FailedTGAllocs: res.failedTGAllocs,
        JobModifyIndex: res.jobModifyIndex,
        CreatedEvals: null,
        Diff: optionalBool(body, 'Diff') ? res.diff : null,
        NextPeriodicLaunch: GO_ZERO_TIME,
        Warnings: '',
        Index: res.index,
      });
    }
    case 'evaluate': {
      if (!isWrite) throw methodNotAllowed(method, req.url);
      const server = requireServer(ctx);
      const body = optionalObjectBody(req.body);
      const evalOptions = body['EvalOptions'] === undefined || body['EvalOptions'] === null ? {} : objectField(body, 'EvalOptions');
      const forceReschedule = optionalBool(evalOptions, 'ForceReschedule');
      const opts = queryOptions(req);
      const job = server.state.jobById(opts.namespace, jobId);
      if (!job) throw notFound('job');
      const res = await server.evaluateJob(opts.namespace, jobId, { forceReschedule });
      return answerWrite(req, reply, res.index, {
        EvalID: res.evalId,
        EvalCreateIndex: res.index,
        JobModifyIndex: job.JobModifyIndex,
        Warnings: '',
        Index: res.index,
        LastContact: 0,
        KnownLeader: true,
      });
    }
    case 'dispatch':
      return dispatchRoute(ctx, req, reply, jobId);
    case 'periodic/force':
      return periodicForceRoute(ctx, req, reply, jobId);
    case 'scale':
      return scaleRoute(ctx, req, reply, jobId);
    case 'revert':
      return revertRoute(ctx, req, reply, jobId);
    case 'stable':
      return stableRoute(ctx, req, reply, jobId);
    case 'submission':
      return submissionRoute(ctx, req, reply, jobId);
    case 'actions':
      // Nomad's task `action` blocks (Nomad 1.7+), one row per action with its task and group.
      if (method !== 'GET') throw methodNotAllowed(method, req.url);
      // Waits on this job only; the index is the job's ModifyIndex, as Nomad's GetActions answers.
      return answerRead(ctx, req, reply, (opts) => [jobTableKey(opts.namespace, jobId)], (server, opts) => {
        const job = server.state.jobById(opts.namespace, jobId);
        if (!job) throw notFound('job');
        return job.TaskGroups.flatMap((g) =>
          g.Tasks.flatMap((t) => (t.Actions ?? []).map((a) => ({ Name: a.Name, Command: a.Command, Args: a.Args, TaskName: t.Name, TaskGroupName: g.Name }))),
        );
      });
    case 'action':
      // The action itself runs over a websocket, upgraded before fastify routes (client-exec.ts).
      throw badRequest('a task action needs a websocket: send "Connection: Upgrade" and "Upgrade: websocket"');
    case 'services':
      // The registrations of the job's `provider = "nomad"` services; blocks on the service table.
      if (method !== 'GET') throw methodNotAllowed(method, req.url);
      return answerRead(ctx, req, reply, [Table.Services, Table.Jobs], (server, opts) => {
        if (!server.state.jobById(opts.namespace, jobId)) throw notFound('job');
        return server.state.serviceRegistrationsByJob(opts.namespace, jobId);
      });
    default: {
      const never: never = sub;
      throw notFound(`route ${String(never)}`);
    }
  }
}
