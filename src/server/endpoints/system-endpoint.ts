/**
 * The system and operator endpoint: garbage collection (the leader's periodic one and the forced
 * one of PUT /v1/system/gc), job summary reconciliation, and the scheduler configuration.
 */
import type { SchedulerConfiguration } from '../../structs/scheduler-config.js';
import type { AutopilotConfig, AutopilotConfigFields } from '../../structs/autopilot-config.js';
import { findGarbage } from '../gc/garbage.js';
import type { EndpointContext } from './endpoint-context.js';

export class SystemEndpoint {
  constructor(private readonly ctx: EndpointContext) {}

  /** Removes old terminal evals (and their terminal allocs) of dead jobs; returns how many evals. */
  async collectGarbage(): Promise<number> {
    const threshold = (this.ctx.config.gcThresholdMs ?? 3_600_000) * 1_000_000;
    const g = findGarbage(this.ctx.store, this.ctx.nowNanos(), threshold);
    if (g.evalIds.length === 0) return 0;
    await this.ctx.apply({ Type: 'EvalDelete', EvalIDs: g.evalIds, AllocIDs: g.allocIds });
    return g.evalIds.length;
  }

  async forceGarbageCollection(): Promise<{ evals: number; jobs: number }> {
    const { store } = this.ctx;
    const g = findGarbage(store, this.ctx.nowNanos(), 0);
    if (g.evalIds.length > 0) await this.ctx.apply({ Type: 'EvalDelete', EvalIDs: g.evalIds, AllocIDs: g.allocIds });
    // A dead job goes once nothing of it is left; periodic and parameterized parents only when stopped.
    const dead = store
      .jobs('*')
      .filter((j) => j.Status === 'dead' && (j.Stop || !(j.Periodic?.Enabled || j.ParameterizedJob)))
      .filter((j) => store.evalsByJob(j.Namespace, j.ID).length === 0 && store.allocsByJob(j.Namespace, j.ID).length === 0);
    for (const j of dead) await this.ctx.apply({ Type: 'JobDeregister', Namespace: j.Namespace, JobID: j.ID, Purge: true, Eval: null, Now: this.ctx.nowNanos() });
    return { evals: g.evalIds.length, jobs: dead.length };
  }

  async reconcileJobSummaries(): Promise<{ index: number }> {
    return { index: await this.ctx.apply({ Type: 'JobSummaryReconcile', Now: this.ctx.nowNanos() }) };
  }

  schedulerConfig(): SchedulerConfiguration {
    return this.ctx.store.schedulerConfig();
  }

  autopilotConfig(): AutopilotConfig {
    return this.ctx.store.autopilotConfig();
  }

  /**
   * Replaces the autopilot configuration; with `cas`, only when the stored ModifyIndex is `cas`
   * at the moment the log applies it (updated false otherwise, nothing changed).
   */
  async setAutopilotConfig(config: AutopilotConfigFields, cas?: number): Promise<{ updated: boolean; index: number }> {
    const index = await this.ctx.apply({ Type: 'AutopilotConfigSet', Config: config, ...(cas !== undefined ? { Cas: cas } : {}), Now: this.ctx.nowNanos() });
    return { updated: this.ctx.store.autopilotConfig().ModifyIndex === index, index };
  }

  async setSchedulerConfig(config: Omit<SchedulerConfiguration, 'CreateIndex' | 'ModifyIndex'>, cas?: number): Promise<{ updated: boolean; index: number }> {
    if (cas !== undefined && this.ctx.store.schedulerConfig().ModifyIndex !== cas) return { updated: false, index: this.ctx.store.latestIndex() };
    const index = await this.ctx.apply({ Type: 'SchedulerConfigSet', Config: config, Now: this.ctx.nowNanos() });
    return { updated: true, index };
  }
}
