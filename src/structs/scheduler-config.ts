/**
 * Nomad's SchedulerConfiguration (`/v1/operator/scheduler/configuration`): the placement
 * algorithm (binpack fills the fullest node that fits, spread the emptiest) and the preemption
 * and admission flags. Caravan honours SchedulerAlgorithm and RejectJobRegistration; it stores
 * the preemption, oversubscription and PauseEvalBroker flags for Nomad's clients without acting
 * on them (Caravan does not preempt).
 */

export type SchedulerAlgorithm = 'binpack' | 'spread';

export interface PreemptionConfig {
  SystemSchedulerEnabled: boolean;
  SysBatchSchedulerEnabled: boolean;
  BatchSchedulerEnabled: boolean;
  ServiceSchedulerEnabled: boolean;
}

export interface SchedulerConfiguration {
  SchedulerAlgorithm: SchedulerAlgorithm;
  PreemptionConfig: PreemptionConfig;
  MemoryOversubscriptionEnabled: boolean;
  RejectJobRegistration: boolean;
  PauseEvalBroker: boolean;
  CreateIndex: number;
  ModifyIndex: number;
}

/** Nomad's defaults: binpack, preemption of system jobs only. */
export function defaultSchedulerConfig(): SchedulerConfiguration {
  return {
    SchedulerAlgorithm: 'binpack',
    PreemptionConfig: { SystemSchedulerEnabled: true, SysBatchSchedulerEnabled: false, BatchSchedulerEnabled: false, ServiceSchedulerEnabled: false },
    MemoryOversubscriptionEnabled: false,
    RejectJobRegistration: false,
    PauseEvalBroker: false,
    CreateIndex: 0,
    ModifyIndex: 0,
  };
}

/** A field of a configuration update that does not fit; `field` names it. */
export class SchedulerConfigProblem {
  constructor(
    readonly field: string,
    readonly reason: string,
  ) {}
}

function bool(body: Record<string, unknown>, name: string, fallback: boolean, prefix = ''): boolean {
  const v = body[name];
  if (v === undefined || v === null) return fallback;
  if (typeof v !== 'boolean') throw new SchedulerConfigProblem(prefix + name, 'must be a boolean');
  return v;
}

/**
 * The configuration a PUT body asks for. As in Nomad, the body replaces the whole
 * configuration: absent fields take their zero values, an empty algorithm means binpack.
 * Returns a SchedulerConfigProblem instead of throwing, so callers choose the error.
 */
export function parseSchedulerConfig(body: Record<string, unknown>): Omit<SchedulerConfiguration, 'CreateIndex' | 'ModifyIndex'> | SchedulerConfigProblem {
  try {
    const algo = body['SchedulerAlgorithm'];
    if (algo !== undefined && algo !== null && algo !== '' && algo !== 'binpack' && algo !== 'spread') {
      return new SchedulerConfigProblem('SchedulerAlgorithm', `invalid scheduler algorithm ${JSON.stringify(algo)} (want "binpack" or "spread")`);
    }
    const pre = body['PreemptionConfig'];
    if (pre !== undefined && pre !== null && (typeof pre !== 'object' || Array.isArray(pre))) return new SchedulerConfigProblem('PreemptionConfig', 'must be an object');
    const p = (pre ?? {}) as Record<string, unknown>;
    return {
      SchedulerAlgorithm: algo === 'spread' ? 'spread' : 'binpack',
      PreemptionConfig: {
        SystemSchedulerEnabled: bool(p, 'SystemSchedulerEnabled', false, 'PreemptionConfig.'),
        SysBatchSchedulerEnabled: bool(p, 'SysBatchSchedulerEnabled', false, 'PreemptionConfig.'),
        BatchSchedulerEnabled: bool(p, 'BatchSchedulerEnabled', false, 'PreemptionConfig.'),
        ServiceSchedulerEnabled: bool(p, 'ServiceSchedulerEnabled', false, 'PreemptionConfig.'),
      },
      MemoryOversubscriptionEnabled: bool(body, 'MemoryOversubscriptionEnabled', false),
      RejectJobRegistration: bool(body, 'RejectJobRegistration', false),
      PauseEvalBroker: bool(body, 'PauseEvalBroker', false),
    };
  } catch (err) {
    if (err instanceof SchedulerConfigProblem) return err;
    throw err;
  }
}
