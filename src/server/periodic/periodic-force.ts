/**
 * `POST /v1/job/:id/periodic/force`: launches a periodic job's child now, whatever its schedule
 * and prohibit_overlap say (as Nomad's Periodic.Force), and answers with the child's evaluation.
 */
import { ServerError } from '../server-error.js';
import type { ServerApi } from '../server-api.js';
import { periodicChildJob } from './periodic-launch.js';

/** The answer to a forced launch, as Nomad's PeriodicForceResponse (plus the child's ID). */
export interface PeriodicForceResult {
  EvalID: string;
  EvalCreateIndex: number;
  Index: number;
  DispatchedJobID: string;
}

/** Registers the child of periodic job `jobId` for launch time `nowMs`. */
export async function forcePeriodicLaunch(server: ServerApi, namespace: string, jobId: string, nowMs: number): Promise<PeriodicForceResult> {
  const job = server.state.jobById(namespace, jobId);
  if (!job) throw new ServerError('JOB_NOT_FOUND', { job: jobId });
  if (!job.Periodic?.Enabled || job.ParameterizedJob) {
    throw new ServerError('JOB_NOT_PERIODIC', { job: jobId });
  }
  if (job.Stop) throw new ServerError('JOB_STOPPED', { job: jobId });
  const child = periodicChildJob(job, nowMs);
  const res = await server.registerJob(child);
  return { EvalID: res.evalId, EvalCreateIndex: res.evalCreateIndex, Index: res.index, DispatchedJobID: child.ID };
}
