/**
 * The scaling endpoint: a group's count set by hand or by an autoscaler (a new job version with
 * its scaling event), a bare scaling event (count null), and a group's scaling events.
 */
import type { Job } from '../../structs/index.js';
import { ServerError } from '../server-error.js';
import type { RegisterJobResult, ScaleRequestEvent } from '../server-api.js';
import type { ScalingEvent } from '../state/job-scaling-events.js';
import type { EndpointContext } from './endpoint-context.js';
import type { JobEndpoint } from './job-endpoint.js';

export class ScalingEndpoint {
  constructor(
    private readonly ctx: EndpointContext,
    private readonly jobs: JobEndpoint,
  ) {}

  async scaleJobGroup(namespace: string, jobId: string, group: string, count: number | null, event: ScaleRequestEvent = { Message: '', Error: false, Meta: null }): Promise<RegisterJobResult> {
    const current = this.ctx.store.jobById(namespace, jobId);
    if (!current) throw new ServerError('JOB_NOT_FOUND', { job: jobId });
    const tg = current.TaskGroups.find((g) => g.Name === group);
    if (!tg) throw new ServerError('JOB_ACTION_INVALID', { reason: `task group "${group}" specified for scaling does not exist in job` });
    const now = this.ctx.nowNanos();
    const ev: ScalingEvent = { Time: now, Count: count, PreviousCount: tg.Count, Message: event.Message, Error: event.Error, Meta: event.Meta, EvalID: null, CreateIndex: 0 };
    if (count === null) {
      const index = await this.ctx.apply({ Type: 'ScalingEventRecord', Namespace: namespace, JobID: jobId, Group: group, Event: ev, Now: now });
      return { evalId: '', evalCreateIndex: 0, jobModifyIndex: current.JobModifyIndex, index, warnings: '' };
    }
    if (current.Stop) throw new ServerError('JOB_ACTION_INVALID', { reason: `job "${jobId}" is stopped: cannot scale` });
    if (current.Type === 'system' || current.Type === 'sysbatch') throw new ServerError('JOB_ACTION_INVALID', { reason: `cannot scale jobs of type "${current.Type}"` });
    const policy = (tg as { Scaling?: { Min?: number; Max?: number } | null }).Scaling;
    if (policy && typeof policy.Min === 'number' && count < policy.Min) throw new ServerError('JOB_ACTION_INVALID', { reason: `group count was less than scaling policy minimum: ${count} < ${policy.Min}` });
    if (policy && typeof policy.Max === 'number' && count > policy.Max) throw new ServerError('JOB_ACTION_INVALID', { reason: `group count was greater than scaling policy maximum: ${count} > ${policy.Max}` });
    const job: Job = { ...current, TaskGroups: current.TaskGroups.map((g) => (g.Name === group ? { ...g, Count: count } : g)) };
    return this.jobs.registerJob(job, { scalingEvent: { Group: group, Event: ev } });
  }

  scalingEvents(namespace: string, jobId: string, group: string): ScalingEvent[] {
    return this.ctx.store.scalingEvents.events(namespace, jobId, group);
  }
}
