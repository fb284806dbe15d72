/**
 * The job endpoint: register (with Nomad's enforce-index and preserve-counts), deregister,
 * evaluate, plan (a dry run of the scheduler), revert to a version, version stability, and the
 * sources kept with each version.
 */
import { generateId, type DesiredTransition, type Job } from '../../structs/index.js';
import { jobSpecChanged } from '../fsm/fsm.js';
import { admitJob, type JobSubmissionContext } from '../job-admission.js';
import { resolveJobLimits, type JobLimits } from '../job-limits.js';
import { checkJobNamespace } from './namespace-endpoint.js';
import { checkJobNodePool } from './node-pool-endpoint.js';
import { newEvaluation } from '../new-eval.js';
import { dryRunPlan } from '../plan-dry-run.js';
import { ServerError } from '../server-error.js';
import type { DeregisterJobOptions, DeregisterJobResult, JobPlanResult, JobSubmissionOptions, RegisterJobOptions, RegisterJobResult } from '../server-api.js';
import type { JobSubmission } from '../state/job-submissions.js';
import type { EndpointContext } from './endpoint-context.js';

/**
 * Gives each group's scaling policy its ID and Target before the job goes to the log: a group
 * that had a policy in the registered job keeps its ID and CreateIndex (autoscalers follow a
 * policy across job versions, as Nomad's propagateScalingPolicyIDs), a new one gets a new ID.
 * Done here, not in the FSM, so every server applies the same IDs.
 */
export function assignScalingPolicyIds(job: Job, existing: Job | undefined): void {
  for (const tg of job.TaskGroups) {
    if (!tg.Scaling) continue;
    const prev = existing?.TaskGroups.find((g) => g.Name === tg.Name)?.Scaling;
    tg.Scaling.ID = prev?.ID || generateId();
    tg.Scaling.CreateIndex = prev ? prev.CreateIndex || existing?.JobModifyIndex || 0 : 0;
    tg.Scaling.Target = { Namespace: job.Namespace, Job: job.ID, Group: tg.Name };
  }
}

export class JobEndpoint {
  constructor(private readonly ctx: EndpointContext) {}

  /** The server's job limits (job_max_count, job_max_priority, job_default_priority). */
  jobLimits(): JobLimits {
    return resolveJobLimits(this.ctx.config.jobLimits);
  }

  /** How a submission is admitted here: this region, the request's namespace and job ID, the server's limits. */
  private submission(opts: JobSubmissionOptions): JobSubmissionContext {
    return { region: this.ctx.config.region ?? 'global', namespace: opts.namespace, pathJobId: opts.pathJobId, limits: this.jobLimits() };
  }

  async registerJob(input: unknown, opts: RegisterJobOptions = {}): Promise<RegisterJobResult> {
    const { store } = this.ctx;
    if (store.schedulerConfig().RejectJobRegistration) throw new ServerError('JOB_REGISTRATION_REJECTED', {});
    const job = admitJob(input, this.submission(opts));
    checkJobNamespace(this.ctx.store, job);
    checkJobNodePool(this.ctx, job);
    const existing = store.jobById(job.Namespace, job.ID);
    if (opts.enforceIndex) {
      const want = opts.jobModifyIndex ?? 0;
      if (want === 0 && existing) {
        throw new ServerError('JOB_EXISTS', {});
      }
      if (want !== 0 && (!existing || existing.JobModifyIndex !== want)) {
        throw new ServerError('JOB_MODIFY_INDEX_CONFLICT', { expected: want, actual: existing?.JobModifyIndex ?? 0 });
      }
    }
    assignScalingPolicyIds(job, existing);
    if (opts.preserveCounts && existing) {
      for (const tg of job.TaskGroups) {
        const prev = existing.TaskGroups.find((g) => g.Name === tg.Name);
        if (prev) tg.Count = prev.Count;
      }
    }
    const now = this.ctx.nowNanos();
    const needsEval = !job.Periodic?.Enabled && !job.ParameterizedJob;
    const evaluation = needsEval ? newEvaluation(job, 'job-register', now) : null;
    const index = await this.ctx.apply({
      Type: 'JobRegister',
      Job: job,
      Eval: evaluation,
      Now: now,
      ...(opts.submission ? { Submission: opts.submission } : {}),
      ...(opts.scalingEvent ? { ScalingEvent: opts.scalingEvent } : {}),
    });
    const stored = store.jobById(job.Namespace, job.ID);
    return {
      evalId: evaluation?.ID ?? '',
      evalCreateIndex: evaluation ? index : 0,
      jobModifyIndex: stored?.JobModifyIndex ?? index,
      index,
      warnings: '',
    };
  }

  async deregisterJob(namespace: string, jobId: string, opts: DeregisterJobOptions = {}): Promise<DeregisterJobResult> {
    const job = this.ctx.store.jobById(namespace, jobId);
    if (!job) throw new ServerError('JOB_NOT_FOUND', { job: jobId });
    const now = this.ctx.nowNanos();
    const needsEval = !job.Periodic?.Enabled && !job.ParameterizedJob;
    const evaluation = needsEval ? newEvaluation(job, 'job-deregister', now) : null;
    const index = await this.ctx.apply({
      Type: 'JobDeregister',
      Namespace: namespace,
      JobID: jobId,
      Purge: opts.purge === true,
      ...(opts.noShutdownDelay ? { NoShutdownDelay: true } : {}),
      Eval: evaluation,
      Now: now,
    });
    return {
      evalId: evaluation?.ID ?? '',
      evalCreateIndex: evaluation ? index : 0,
      jobModifyIndex: this.ctx.store.jobById(namespace, jobId)?.JobModifyIndex ?? index,
      index,
    };
  }

  async evaluateJob(namespace: string, jobId: string, opts: { forceReschedule?: boolean } = {}): Promise<{ evalId: string; index: number }> {
    const job = this.ctx.store.jobById(namespace, jobId);
    if (!job) throw new ServerError('JOB_NOT_FOUND', { job: jobId });
    if (job.Periodic?.Enabled || job.ParameterizedJob) {
      throw new ServerError('JOB_NOT_EVALUABLE', { job: jobId });
    }
    const e = newEvaluation(job, 'job-register', this.ctx.nowNanos());
    if (opts.forceReschedule) {
      // As Nomad: every failed allocation not yet replaced is marked, in the same write as the
      // evaluation, and the reconciler replaces marked ones at once.
      const forced: Record<string, DesiredTransition> = {};
      for (const a of this.ctx.store.allocsByJob(namespace, jobId)) {
        if (a.ClientStatus === 'failed' && a.NextAllocation === '') forced[a.ID] = { ForceReschedule: true };
      }
      const index = await this.ctx.apply({ Type: 'AllocUpdateDesiredTransition', Allocs: forced, Evals: [e], Now: this.ctx.nowNanos() });
      return { evalId: e.ID, index };
    }
    const index = await this.ctx.apply({ Type: 'EvalUpdate', Evals: [e], Now: this.ctx.nowNanos() });
    return { evalId: e.ID, index };
  }

  async planJob(input: unknown, opts: JobSubmissionOptions = {}): Promise<JobPlanResult> {
    const job = admitJob(input, this.submission(opts));
    checkJobNamespace(this.ctx.store, job);
    checkJobNodePool(this.ctx, job);
    const snapshot = this.ctx.store.snapshot();
    const existing = snapshot.jobById(job.Namespace, job.ID);
    const changed = !existing || jobSpecChanged(existing, job);
    const index = snapshot.index();
    const candidate: Job = {
      ...job,
      CreateIndex: existing?.CreateIndex ?? index + 1,
      ModifyIndex: index + 1,
      JobModifyIndex: changed ? index + 1 : (existing?.JobModifyIndex ?? index + 1),
      Version: !existing ? 0 : changed ? existing.Version + 1 : existing.Version,
    };
    const factory = this.ctx.factoryFor(job.Type);
    if (!factory) throw new ServerError('NO_SCHEDULER', { reason: `no scheduler for job type "${job.Type}"` });
    const evaluation = newEvaluation(candidate, 'job-register', this.ctx.nowNanos(), { AnnotatePlan: true });
    return dryRunPlan({
      snapshot,
      candidate,
      existing,
      evaluation,
      factory,
      now: this.ctx.clock.now(),
      random: this.ctx.random,
    });
  }

  jobSubmission(namespace: string, jobId: string, version: number): JobSubmission | undefined {
    return this.ctx.store.submissions.get(namespace, jobId, version);
  }

  async revertJob(namespace: string, jobId: string, version: number, enforcePriorVersion?: number): Promise<RegisterJobResult> {
    const current = this.ctx.store.jobById(namespace, jobId);
    if (!current) throw new ServerError('JOB_NOT_FOUND', { job: jobId });
    if (enforcePriorVersion !== undefined && current.Version !== enforcePriorVersion) {
      throw new ServerError('JOB_ACTION_INVALID', { reason: `current job has version ${current.Version}; enforcing version ${enforcePriorVersion}` });
    }
    if (current.Version === version) throw new ServerError('JOB_ACTION_INVALID', { reason: "can't revert to current version" });
    const target = this.ctx.store.jobVersions(namespace, jobId).find((v) => v.Version === version);
    if (!target) throw new ServerError('JOB_VERSION_NOT_FOUND', { job: jobId, namespace, version });
    return this.registerJob({ ...target, Stable: false, Stop: false });
  }

  /** Registers an earlier version of a job again as its newest version (auto-revert). */
  async autoRevert(version: Job): Promise<void> {
    const current = this.ctx.store.jobById(version.Namespace, version.ID);
    if (!current || current.Stop) return;
    await this.registerJob({ ...version, Stable: false, Stop: false });
  }

  async setJobStability(namespace: string, jobId: string, version: number, stable: boolean): Promise<{ index: number }> {
    const { store } = this.ctx;
    if (!store.jobById(namespace, jobId)) throw new ServerError('JOB_NOT_FOUND', { job: jobId });
    if (!store.jobVersions(namespace, jobId).some((v) => v.Version === version)) throw new ServerError('JOB_VERSION_NOT_FOUND', { job: jobId, namespace, version });
    const index = await this.ctx.apply({ Type: 'JobStability', Namespace: namespace, JobID: jobId, Version: version, Stable: stable, Now: this.ctx.nowNanos() });
    return { index };
  }
}
