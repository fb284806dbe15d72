/**
 * Nomad's ScalingPolicy: a task group's `scaling { min max enabled policy {…} }` block, kept in
 * the job. Caravan runs no autoscaler; it keeps the policy for the autoscalers that read
 * `/v1/scaling/policies`, bounds `job scale` by Min and Max, and takes a group's count from Min
 * when the group gives none (as Nomad's api TaskGroup.Canonicalize).
 *
 * A policy's ID is given at registration and kept by every later version of the job whose group
 * still has a policy (Nomad's propagateScalingPolicyIDs), so autoscalers can follow it.
 */
import type { DeepPartial } from './deep-partial.js';

/** The only policy type a task group's scaling block has in Nomad's community edition. */
export const SCALING_POLICY_TYPE_HORIZONTAL = 'horizontal';

/** The keys of a policy's Target (Nomad's ScalingTargetNamespace/Job/Group). */
export interface ScalingPolicyTarget {
  Namespace: string;
  Job: string;
  Group: string;
}

/** Nomad's structs.ScalingPolicy, as stored in a task group and answered by /v1/scaling/policy/:id. */
export interface ScalingPolicy {
  ID: string;
  Type: string;
  /** Namespace, Job and Group of the policy's task group (ScalingPolicyTarget's keys). */
  Target: Record<string, string>;
  Policy: Record<string, unknown> | null;
  Min: number;
  /** -1 when the job gave none (validation then refuses the job, as Nomad). */
  Max: number;
  Enabled: boolean;
  CreateIndex: number;
  ModifyIndex: number;
}

/** Nomad's ScalingPolicyListStub (the items of /v1/scaling/policies). */
export interface ScalingPolicyListStub {
  ID: string;
  Enabled: boolean;
  Type: string;
  Target: Record<string, string>;
  CreateIndex: number;
  ModifyIndex: number;
}

/** A scaling block as a job file or API request states it. */
export type ScalingPolicyDraft = DeepPartial<ScalingPolicy>;

/**
 * The count a group without `count` gets: its scaling block's Min when it has one, else 1
 * (Nomad's api TaskGroup.Canonicalize). An explicit count, even 0, is kept.
 */
export function defaultGroupCount(count: number | undefined, scaling: ScalingPolicyDraft | null | undefined): number {
  if (count !== undefined) return count;
  const min = scaling?.Min;
  return typeof min === 'number' ? min : 1;
}

/**
 * A scaling block with Nomad's defaults: enabled, Min the group's count, type horizontal, Max
 * -1 when absent (so validation names it). ID and Target come at registration.
 */
export function canonicalizeScalingPolicy(draft: ScalingPolicyDraft | null | undefined, groupCount: number): ScalingPolicy | null {
  if (!draft) return null;
  return {
    ID: draft.ID ?? '',
    Type: draft.Type || SCALING_POLICY_TYPE_HORIZONTAL,
    Target: { ...((draft.Target ?? {}) as Record<string, string>) },
    Policy: draft.Policy ? { ...(draft.Policy as Record<string, unknown>) } : null,
    Min: draft.Min ?? groupCount,
    Max: draft.Max ?? -1,
    Enabled: draft.Enabled ?? true,
    CreateIndex: draft.CreateIndex ?? 0,
    ModifyIndex: draft.ModifyIndex ?? 0,
  };
}

/** Problems of a group's scaling policy against its count (Nomad's ScalingPolicy and TaskGroup Validate). */
export function scalingPolicyProblems(p: ScalingPolicy, groupCount: number): string[] {
  const out: string[] = [];
  if (p.Type !== SCALING_POLICY_TYPE_HORIZONTAL) out.push(`task group scaling policy had invalid type: ${JSON.stringify(p.Type)}`);
  if (!Number.isInteger(p.Max) || p.Max < 0) out.push('maximum count must be specified and non-negative');
  else if (p.Max < p.Min) out.push('maximum count must not be less than minimum count');
  if (!Number.isInteger(p.Min) || p.Min < 0) out.push('minimum count must be specified and non-negative');
  if (p.Min > groupCount) out.push('task group count must not be less than minimum count in scaling policy');
  if (p.Max >= 0 && groupCount > p.Max) out.push('task group count must not be greater than maximum count in scaling policy');
  return out;
}

/** The list stub of a policy. */
export function scalingPolicyStub(p: ScalingPolicy): ScalingPolicyListStub {
  return { ID: p.ID, Enabled: p.Enabled, Type: p.Type, Target: { ...p.Target }, CreateIndex: p.CreateIndex, ModifyIndex: p.ModifyIndex };
}

/**
 * The job's groups with their policies stamped at registration index `index` (a new policy is
 * created there; every policy is modified there). Groups without a policy are shared as they are.
 */
export function stampScalingPolicies<G extends { Scaling?: ScalingPolicy | null }>(groups: G[], index: number): G[] {
  if (!groups.some((g) => g.Scaling)) return groups;
  return groups.map((g) => (g.Scaling ? { ...g, Scaling: { ...g.Scaling, CreateIndex: g.Scaling.CreateIndex || index, ModifyIndex: index } } : g));
}
