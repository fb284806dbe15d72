/**
 * Scaling events per job and task group (Nomad's ScalingEvent), shown in a job's scale status
 * and by `caravan job scaling-events`: each `PUT /v1/job/:id/scale` records one, with or
 * without a count change. Newest first; like Nomad, 20 are kept per group.
 */

/** Nomad's ScalingEvent. */
export interface ScalingEvent {
  /** Unix nanoseconds. */
  Time: number;
  Count: number | null;
  PreviousCount: number;
  Message: string;
  Error: boolean;
  Meta: Record<string, unknown> | null;
  EvalID: string | null;
  CreateIndex: number;
}

/** Events kept per task group. */
export const SCALING_EVENTS_KEPT = 20;

const key = (namespace: string, id: string) => `${namespace}\u0000${id}`;

/** A stored event with where it belongs, for snapshots. */
export interface StoredScalingEvent {
  Namespace: string;
  JobID: string;
  Group: string;
  Event: ScalingEvent;
}

/** The kept events. */
export class JobScalingEvents {
  private readonly byJob = new Map<string, Map<string, ScalingEvent[]>>();

  add(namespace: string, jobId: string, group: string, ev: ScalingEvent): void {
    const k = key(namespace, jobId);
    let groups = this.byJob.get(k);
    if (!groups) this.byJob.set(k, (groups = new Map()));
    groups.set(group, [ev, ...(groups.get(group) ?? [])].slice(0, SCALING_EVENTS_KEPT));
  }

  /** The events of a job's group, newest first (empty when none). */
  events(namespace: string, jobId: string, group: string): ScalingEvent[] {
    return this.byJob.get(key(namespace, jobId))?.get(group) ?? [];
  }

  deleteJob(namespace: string, jobId: string): void {
    this.byJob.delete(key(namespace, jobId));
  }

  serialize(): StoredScalingEvent[] {
    const out: StoredScalingEvent[] = [];
    for (const [k, groups] of this.byJob) {
      const [Namespace, JobID] = k.split('\u0000') as [string, string];
      // Oldest first, so that restoring by add() keeps the order.
      for (const [Group, evs] of groups) for (const Event of [...evs].reverse()) out.push({ Namespace, JobID, Group, Event });
    }
    return out;
  }

  restore(all: readonly StoredScalingEvent[] | undefined): void {
    this.byJob.clear();
    for (const s of all ?? []) this.add(s.Namespace, s.JobID, s.Group, s.Event);
  }
}
