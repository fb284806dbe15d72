/**
 * Periodic children: the job a periodic parent launches at a given time (`<parent>/periodic-<unix>`,
 * ParentID set, no periodic block of its own) and the launch time read back from a child's ID.
 */
import type { Job } from '../../structs/index.js';
import { checkTimeZone, parseCron } from './cron-spec.js';

/** What separates a periodic parent's ID from its children's launch time. */
export const PERIODIC_LAUNCH_SUFFIX = '/periodic-';

/** Whether a periodic job is one the dispatcher launches: enabled, not stopped, not a parameterized parent. */
export function isActivePeriodic(job: Job): boolean {
  return job.Periodic?.Enabled === true && !job.Stop && !job.ParameterizedJob;
}

/** The cron specs of a periodic job (Spec plus Specs, without empties or duplicates). */
export function periodicSpecs(job: Job): string[] {
  const p = job.Periodic;
  if (!p) return [];
  return [...new Set([p.Spec, ...(p.Specs ?? [])].filter((s) => s.trim() !== ''))];
}

/** The child job a periodic parent launches at `launchMs`. */
export function periodicChildJob(parent: Job, launchMs: number): Job {
  const id = `${parent.ID}${PERIODIC_LAUNCH_SUFFIX}${Math.floor(launchMs / 1000)}`;
  return {
    ...structuredClone(parent),
    ID: id,
    Name: id,
    ParentID: parent.ID,
    Periodic: null,
    Status: 'pending',
    StatusDescription: '',
    Stop: false,
  };
}

/** The launch time (ms) encoded in a periodic child's ID, or null when it is not one of `parentId`. */
export function childLaunchTime(parentId: string, childId: string): number | null {
  const prefix = `${parentId}${PERIODIC_LAUNCH_SUFFIX}`;
  if (!childId.startsWith(prefix)) return null;
  const rest = childId.slice(prefix.length);
  return /^\d+$/.test(rest) ? Number(rest) * 1000 : null;
}

/** Problems with a job's periodic block that the loose job validation cannot see (cron fields, time zone). */
export function periodicProblems(job: Job): string[] {
  if (!job.Periodic?.Enabled) return [];
  const problems: string[] = [];
  try {
    checkTimeZone(job.Periodic.TimeZone || 'UTC');
  } catch (err) {
    problems.push(`periodic: ${(err as Error).message}`);
  }
  for (const spec of periodicSpecs(job)) {
    try {
      parseCron(spec);
    } catch (err) {
      problems.push(`periodic: cron ${JSON.stringify(spec)}: ${(err as Error).message}`);
    }
  }
  return problems;
}
