/**
 * The server's part of the agent log: what the cluster did, one event a line with its IDs,
 * written by the leader from each applied log entry (so every change is logged once, whoever
 * proposed it, in log order). Jobs registered and deregistered; evaluations once processed, with
 * how many allocations they placed and stopped, and each task group they could not place with
 * Nomad's reasons; blocked evaluations; deployment status changes; node status changes and
 * drains. Routine steps (an evaluation created, an allocation placed) are debug; outcomes are
 * info; a placement failure is a warning, since someone asked for work that is not running.
 */
import type pino from 'pino';
import { allocMetricReasons } from '../../structs/alloc-metric-reasons.js';
import type { Deployment, Evaluation } from '../../structs/index.js';
import type { StreamEvent } from '../events/event.js';
import type { Command } from '../fsm/commands.js';

/** Evaluations whose placements are counted while they run; beyond this the oldest are forgotten. */
const MAX_TRACKED = 1_000;

const FINISHED_EVAL = new Set(['complete', 'failed', 'canceled']);

interface PlanCounts {
  placed: number;
  stopped: number;
}

/** Turns applied entries into log lines; keeps only what it needs to tell a change from a repeat. */
export class LeaderEventLog {
  /** Placements and stops per evaluation, from its plans, until the evaluation finishes. */
  private readonly plans = new Map<string, PlanCounts>();
  /** The last status logged per deployment (a repeat of it is no change). */
  private readonly deployments = new Map<string, string>();

  constructor(private readonly logger: pino.Logger | undefined) {}

  /** Logs what the command applied at `index` did; `events` are what it published. */
  record(cmd: Command, index: number, events: StreamEvent[]): void {
    const log = this.logger;
    if (!log) return;
    this.recordCommand(log, cmd, index, events);
    for (const ev of events) {
      const p = ev.Payload;
      if ('Evaluation' in p) this.recordEval(log, p.Evaluation);
      else if ('Deployment' in p) this.recordDeployment(log, p.Deployment, index);
    }
  }

  private recordCommand(log: pino.Logger, cmd: Command, index: number, events: StreamEvent[]): void {
    switch (cmd.Type) {
      case 'JobRegister':
        log.info({ job_id: cmd.Job.ID, namespace: cmd.Job.Namespace, version: cmd.Job.Version, eval_id: cmd.Eval?.ID ?? '' }, 'job registered');
        return;
      case 'JobDeregister':
        log.info({ job_id: cmd.JobID, namespace: cmd.Namespace, purge: cmd.Purge, eval_id: cmd.Eval?.ID ?? '' }, 'job deregistered');
        return;
      case 'ApplyPlanResults': {
        const counts = this.countsOf(cmd.EvalID);
        for (const ev of events) {
          if (!('Allocation' in ev.Payload)) continue;
          const a = ev.Payload.Allocation;
          if (a.CreateIndex !== index) continue;
          counts.placed++;
          log.debug({ alloc_id: a.ID, eval_id: cmd.EvalID, job_id: a.JobID, task_group: a.TaskGroup, node_id: a.NodeID }, 'allocation placed');
        }
        counts.stopped += cmd.AllocsStopped.length;
        return;
      }
      case 'NodeUpdateStatus':
        log.info({ node_id: cmd.NodeID, status: cmd.Status }, 'node status changed');
        return;
      case 'NodeUpdateDrain':
        if (cmd.DrainStrategy) log.info({ node_id: cmd.NodeID, deadline: cmd.DrainStrategy.Deadline, ignore_system_jobs: cmd.DrainStrategy.IgnoreSystemJobs }, 'node drain set');
        else if (cmd.Status === 'complete') log.info({ node_id: cmd.NodeID }, 'node drain complete');
        else log.info({ node_id: cmd.NodeID, mark_eligible: cmd.MarkEligible }, 'node drain canceled');
        return;
      default:
        return;
    }
  }

  private recordEval(log: pino.Logger, e: Evaluation): void {
    const ids = { eval_id: e.ID, job_id: e.JobID, namespace: e.Namespace, type: e.Type, triggered_by: e.TriggeredBy };
    if (e.Status === 'pending') {
      if (!this.plans.has(e.ID)) log.debug(ids, 'evaluation created');
      return;
    }
    if (e.Status === 'blocked') {
      log.debug({ ...ids, previous_eval: e.PreviousEval }, 'blocked evaluation created; waiting for capacity');
      return;
    }
    if (!FINISHED_EVAL.has(e.Status)) return;
    const counts = this.plans.get(e.ID) ?? { placed: 0, stopped: 0 };
    this.plans.delete(e.ID);
    const failed = Object.entries(e.FailedTGAllocs ?? {});
    log.info({ ...ids, status: e.Status, placed: counts.placed, stopped: counts.stopped, failed_groups: failed.length, ...(e.StatusDescription ? { description: e.StatusDescription } : {}) }, 'evaluation processed');
    for (const [group, metric] of failed.sort(([a], [b]) => a.localeCompare(b))) {
      const failedCount = 1 + (metric.CoalescedFailures ?? 0);
      log.warn({ eval_id: e.ID, job_id: e.JobID, namespace: e.Namespace, task_group: group, failed: failedCount, reason: allocMetricReasons(metric).join('; '), blocked_eval: e.BlockedEval }, 'failed to place allocations');
    }
  }

  private recordDeployment(log: pino.Logger, d: Deployment, index: number): void {
    const before = this.deployments.get(d.ID);
    if (before === d.Status) return;
    this.remember(this.deployments, d.ID, d.Status);
    const fields = { deployment_id: d.ID, job_id: d.JobID, namespace: d.Namespace, job_version: d.JobVersion, status: d.Status, description: d.StatusDescription };
    if (d.CreateIndex === index) log.info(fields, 'deployment created');
    else log.info({ ...fields, ...(before ? { previous_status: before } : {}) }, 'deployment status changed');
  }

  private countsOf(evalId: string): PlanCounts {
    let c = this.plans.get(evalId);
    if (!c) {
      c = { placed: 0, stopped: 0 };
      this.remember(this.plans, evalId, c);
    }
    return c;
  }

  /** Sets a key, forgetting the oldest entry past MAX_TRACKED (an evaluation lost by a failover never finishes here). */
  private remember<V>(map: Map<string, V>, key: string, value: V): void {
    map.set(key, value);
    if (map.size > MAX_TRACKED) map.delete(map.keys().next().value!);
  }
}
