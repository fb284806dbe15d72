/**
 * Decoding of `scaling` blocks, as Nomad's jobspec2 does: a group's unlabelled
 * `scaling { enabled min max type policy {…} }` (horizontal, checked by job validation), and a
 * task's `scaling "cpu"` / `scaling "mem"` blocks (Nomad Enterprise's dynamic application
 * sizing), whose label gives the policy type. Task policies are kept so that registration can
 * refuse them by name: Caravan runs no autoscaler that would act on them.
 */
import type { HclBody } from './hcl-body.js';
import type { ScalingPolicyDraft } from '../structs/scaling-policy.js';

/** A task scaling block's label and the policy type Nomad gives it. */
const TASK_POLICY_TYPES: Record<string, string> = { cpu: 'vertical_cpu', mem: 'vertical_mem' };

/**
 * The body of a scaling block. The policy body is free-form (an autoscaler's, not Nomad's);
 * only one is allowed.
 */
export function scalingFromHcl(b: HclBody): ScalingPolicyDraft {
  const s: ScalingPolicyDraft = {};
  const min = b.number('min');
  if (min !== undefined) s.Min = min;
  const max = b.number('max');
  if (max !== undefined) s.Max = max;
  const enabled = b.bool('enabled');
  if (enabled !== undefined) s.Enabled = enabled;
  const type = b.string('type');
  if (type !== undefined) s.Type = type;
  const policy = b.freeMap('policy');
  if (policy !== undefined) s.Policy = policy;
  b.finish();
  return s;
}

/**
 * A task's `scaling "cpu"` and `scaling "mem"` blocks (Nomad's decodeTaskScalingPolicies): the
 * label must be one of the two, each at most once (the body reader reports a repeat), and a
 * `type` given must be the label's.
 */
export function taskScalingPoliciesFromHcl(task: HclBody): ScalingPolicyDraft[] | undefined {
  const out: ScalingPolicyDraft[] = [];
  for (const { label, body } of task.labelled('scaling')) {
    const type = TASK_POLICY_TYPES[label.toLowerCase()];
    const p = scalingFromHcl(body);
    if (type === undefined) {
      task.problem('scaling', `scaling "${label}": scaling policy name must be "cpu" or "mem"`);
      continue;
    }
    if (p.Type !== undefined && p.Type !== type) {
      task.problem('scaling', `scaling "${label}": invalid policy type, expected "${type}" but found "${p.Type}"`);
      continue;
    }
    out.push({ ...p, Type: type });
  }
  return out.length > 0 ? out : undefined;
}
