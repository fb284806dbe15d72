/**
 * The `Children` counts of a parent job's summary (periodic and parameterized parents): how many
 * of its child jobs are pending, running and dead, as Nomad's JobChildrenSummary.
 */
import type { Job, JobChildrenSummary } from '../../structs/index.js';

/** Counts `children` (jobs whose ParentID is the parent) by status. */
export function childrenSummary(children: Iterable<Job>): JobChildrenSummary {
  const out: JobChildrenSummary = { Pending: 0, Running: 0, Dead: 0 };
  for (const c of children) {
    switch (c.Status) {
      case 'pending':
        out.Pending++;
        break;
      case 'running':
        out.Running++;
        break;
      case 'dead':
        out.Dead++;
        break;
      default: {
        const never: never = c.Status;
        void never;
      }
    }
  }
  return out;
}

/** Whether two children summaries hold the same counts. */
export function sameChildren(a: JobChildrenSummary | null, b: JobChildrenSummary): boolean {
  return a !== null && a.Pending === b.Pending && a.Running === b.Running && a.Dead === b.Dead;
}
