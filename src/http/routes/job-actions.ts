/**
 * Write sub-resources of /v1/job/<id> that change a job without a new spec from the user:
 * `revert` (Nomad's JobRevertRequest), `stable` (JobStabilityRequest) and `scale`
 * (ScalingRequest; GET answers the scale status); and `submission`, the source kept per version. Reached through the /v1/job/* router of
 * jobs.ts. Bad input (a missing version, a negative count, an unknown group) is a 400 naming
 * the field, and nothing changes.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Table } from '../../server/state/state-reader.js';
import type { RegisterJobResult } from '../../server/server-api.js';
import { HttpError, badRequest, methodNotAllowed, notFound } from '../http-errors.js';
import { jobScaleStatus } from '../api-views/job-scale-status.js';
import { objectBody, optionalBool } from '../request-body.js';
import { queryParam, type RawQuery } from '../query-options.js';
import type { SubmittedSource } from '../../server/state/job-submissions.js';
import { answerRead, answerWrite, queryOptions, requireServer, type RouteContext } from '../route-context.js';
import { requestAcl } from '../acl/acl-gate.js';
import { deniedHostVolumeMount } from '../../acl/host-volume-mount-check.js';

function requireWrite(req: FastifyRequest): void {
  if (req.method !== 'PUT' && req.method !== 'POST') throw methodNotAllowed(req.method, req.url);
}

/** A required non-negative integer field, a 400 naming it otherwise. */
function requiredUint(body: Record<string, unknown>, name: string): number {
  const v = body[name];
  if (v === undefined || v === null) throw badRequest(`${name} must be specified`);
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) throw badRequest(`${name} must be a non-negative integer`);
  return v;
}

/** The body's JobID, when given, must be the path's. */
function checkJobId(body: Record<string, unknown>, jobId: string): void {
  const id = body['JobID'];
  if (id !== undefined && id !== null && id !== '' && id !== jobId) throw badRequest('Job ID does not match');
}

/** The answer to a write that makes a job version (register, revert, scale), as Nomad's JobRegisterResponse. */
export function registerAnswer(req: FastifyRequest, reply: FastifyReply, res: RegisterJobResult): FastifyReply {
  return answerWrite(req, reply, res.index, {
    EvalID: res.evalId,
    EvalCreateIndex: res.evalCreateIndex,
    JobModifyIndex: res.jobModifyIndex,
    Warnings: res.warnings,
    Index: res.index,
    LastContact: 0,
    KnownLeader: true,
  });
}

/** Answers PUT|POST /v1/job/<id>/revert. */
export async function revertRoute(ctx: RouteContext, req: FastifyRequest, reply: FastifyReply, jobId: string): Promise<FastifyReply> {
  requireWrite(req);
  const server = requireServer(ctx);
  if (!server.revertJob) throw new HttpError('HTTP_NOT_SUPPORTED', { feature: 'job revert' });
  const body = objectBody(req.body);
  checkJobId(body, jobId);
  const version = requiredUint(body, 'JobVersion');
  const enforce = body['EnforcePriorVersion'];
  const prior = enforce === undefined || enforce === null ? undefined : requiredUint(body, 'EnforcePriorVersion');
  // A revert registers the old version with this token, as Nomad's: its host volume mounts need the token's rules too.
  const r = requestAcl(req);
  const target = r ? server.state.jobVersions(queryOptions(req).namespace, jobId).find((j) => j.Version === version) : undefined;
  const denied = r && target ? deniedHostVolumeMount(r.acl, target) : undefined;
  if (denied) throw new HttpError('ACL_HOST_VOLUME_DENIED', { ...denied });
  const res = await server.revertJob(queryOptions(req).namespace, jobId, version, prior);
  return registerAnswer(req, reply, res);
}

/** Answers PUT|POST /v1/job/<id>/stable. */
export async function stableRoute(ctx: RouteContext, req: FastifyRequest, reply: FastifyReply, jobId: string): Promise<FastifyReply> {
  requireWrite(req);
  const server = requireServer(ctx);
  if (!server.setJobStability) throw new HttpError('HTTP_NOT_SUPPORTED', { feature: 'job stability' });
  const body = objectBody(req.body);
  checkJobId(body, jobId);
  const version = requiredUint(body, 'JobVersion');
  const res = await server.setJobStability(queryOptions(req).namespace, jobId, version, optionalBool(body, 'Stable'));
  // Nomad's JobStabilityResponse: the Go client reads JobModifyIndex from the body.
  return answerWrite(req, reply, res.index, { JobModifyIndex: res.index, Index: res.index });
}

/** Answers GET (scale status) and PUT|POST (set a group's count) /v1/job/<id>/scale. */
export async function scaleRoute(ctx: RouteContext, req: FastifyRequest, reply: FastifyReply, jobId: string): Promise<FastifyReply> {
  if (req.method === 'GET') {
    return answerRead(ctx, req, reply, [Table.Jobs, Table.Allocs, Table.Deployments], (server, opts) => {
      const job = server.state.jobById(opts.namespace, jobId);
      if (!job) throw notFound('job');
      return jobScaleStatus(job, server.state.allocsByJob(opts.namespace, jobId), (g) => server.scalingEvents?.(opts.namespace, jobId, g) ?? []);
    });
  }
  requireWrite(req);
  const server = requireServer(ctx);
  if (!server.scaleJobGroup) throw new HttpError('HTTP_NOT_SUPPORTED', { feature: 'job scaling' });
  const body = objectBody(req.body);
  const target = body['Target'];
  if (target === null || typeof target !== 'object' || Array.isArray(target)) throw badRequest('Target must be an object naming the Group');
  const group = (target as Record<string, unknown>)['Group'];
  if (typeof group !== 'string' || group === '') throw badRequest('Target.Group must be specified');
  const targetJob = (target as Record<string, unknown>)['Job'];
  if (targetJob !== undefined && targetJob !== null && targetJob !== '' && targetJob !== jobId) throw badRequest('Target.Job does not match the job in the path');
  // Without a Count the request only records a scaling event (an autoscaler reporting), as in Nomad.
  const rawCount = body['Count'];
  let count: number | null = null;
  if (rawCount !== undefined && rawCount !== null) {
    if (typeof rawCount !== 'number' || !Number.isInteger(rawCount) || rawCount < 0) throw badRequest('Count must be a non-negative integer');
    count = rawCount;
  }
  const message = body['Message'];
  if (message !== undefined && message !== null && typeof message !== 'string') throw badRequest('Message must be a string');
  const meta = body['Meta'];
  if (meta !== undefined && meta !== null && (typeof meta !== 'object' || Array.isArray(meta))) throw badRequest('Meta must be an object');
  const event = { Message: typeof message === 'string' ? message : '', Error: optionalBool(body, 'Error'), Meta: (meta as Record<string, unknown> | null | undefined) ?? null };
  const res = await server.scaleJobGroup(queryOptions(req).namespace, jobId, group, count, event);
  return registerAnswer(req, reply, res);
}

/** The optional `Submission` of a registration body (Nomad's JobSubmission); a 400 naming a bad field. */
export function parseSubmission(body: Record<string, unknown>): SubmittedSource | undefined {
  const raw = body['Submission'];
  if (raw === undefined || raw === null) return undefined;
  if (typeof raw !== 'object' || Array.isArray(raw)) throw badRequest('Submission must be an object');
  const s = raw as Record<string, unknown>;
  const str = (name: string): string => {
    const v = s[name];
    if (v === undefined || v === null) return '';
    if (typeof v !== 'string') throw badRequest(`Submission.${name} must be a string`);
    return v;
  };
  const flags = s['VariableFlags'];
  let variableFlags: Record<string, string> | null = null;
  if (flags !== undefined && flags !== null) {
    if (typeof flags !== 'object' || Array.isArray(flags) || !Object.values(flags).every((v) => typeof v === 'string')) {
      throw badRequest('Submission.VariableFlags must be a map of strings');
    }
    variableFlags = flags as Record<string, string>;
  }
  const source = str('Source');
  if (source === '') return undefined;
  return { Source: source, Format: str('Format'), VariableFlags: variableFlags, Variables: str('Variables') };
}

/** Answers GET /v1/job/<id>/submission?version=N (the job's current version without it). */
export async function submissionRoute(ctx: RouteContext, req: FastifyRequest, reply: FastifyReply, jobId: string): Promise<FastifyReply> {
  if (req.method !== 'GET') throw methodNotAllowed(req.method, req.url);
  const rawVersion = queryParam(req.query as RawQuery, 'version');
  if (rawVersion !== undefined && rawVersion !== '' && !/^\d+$/.test(rawVersion)) {
    throw badRequest(`invalid value for "version": ${JSON.stringify(rawVersion)} (want a non-negative integer)`);
  }
  return answerRead(ctx, req, reply, [Table.Jobs, Table.JobVersions], (server, opts) => {
    if (!server.jobSubmission) throw new HttpError('HTTP_NOT_SUPPORTED', { feature: 'job submissions' });
    const job = server.state.jobById(opts.namespace, jobId);
    if (!job) throw notFound('job');
    const version = rawVersion === undefined || rawVersion === '' ? job.Version : Number(rawVersion);
    const sub = server.jobSubmission(opts.namespace, jobId, version);
    if (!sub) throw notFound('job source');
    return sub;
  });
}
