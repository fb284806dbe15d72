/**
 * How a deployment's counters follow its allocations, applied by the FSM so that replaying the
 * log rebuilds them: a placement counts in PlacedAllocs (and PlacedCanaries for a canary); the
 * first health a client reports counts in HealthyAllocs or UnhealthyAllocs, and a healthy
 * allocation pushes the group's RequireProgressBy to its health time plus progress_deadline.
 */
import type { AllocDeploymentStatus, Allocation, Deployment, DeploymentState } from '../../structs/index.js';

function withGroup(d: Deployment, group: string, change: (s: DeploymentState) => DeploymentState): Deployment {
  const s = d.TaskGroups[group];
  if (!s) return d;
  return { ...d, TaskGroups: { ...d.TaskGroups, [group]: change(s) } };
}

/** The deployment after one of its allocations was placed. */
export function countPlacement(d: Deployment, a: Allocation): Deployment {
  return withGroup(d, a.TaskGroup, (s) => ({
    ...s,
    PlacedAllocs: s.PlacedAllocs + 1,
    PlacedCanaries: a.DeploymentStatus?.Canary ? [...(s.PlacedCanaries ?? []), a.ID] : s.PlacedCanaries,
  }));
}

/**
 * The deployment after an allocation's health changed from `before` to `after`; unchanged
 * unless the health became known (or flipped). `nowMs` stamps a healthy alloc without a time.
 */
export function countHealth(
  d: Deployment,
  a: Allocation,
  before: AllocDeploymentStatus | null,
  after: AllocDeploymentStatus | null,
  nowMs: number,
): Deployment {
  const was = before?.Healthy ?? null;
  const now = after?.Healthy ?? null;
  if (now === null || now === was) return d;
  return withGroup(d, a.TaskGroup, (s) => {
    const next = { ...s };
    if (was === true) next.HealthyAllocs = Math.max(0, next.HealthyAllocs - 1);
    if (was === false) next.UnhealthyAllocs = Math.max(0, next.UnhealthyAllocs - 1);
    if (now) {
      next.HealthyAllocs++;
      if (s.ProgressDeadline > 0) {
        const at = Date.parse(after?.Timestamp ?? '');
        const base = Number.isFinite(at) ? at : nowMs;
        next.RequireProgressBy = new Date(base + s.ProgressDeadline / 1e6).toISOString();
      }
    } else next.UnhealthyAllocs++;
    return next;
  });
}
