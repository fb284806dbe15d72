/**
 * The client status of an allocation derived from its task states, as Nomad derives it:
 * failed if any task failed; else pending while any task is pending; else running while any
 * runs; else complete. Poststop tasks that have not started yet do not hold the allocation
 * in pending: they only run once everything else is dead.
 */
import type { AllocClientStatus, TaskState } from '../../structs/alloc.js';

/** The status and Nomad's description for it. */
export interface AllocStatus {
  status: AllocClientStatus;
  description: string;
}

/** Derives the allocation's client status; `poststop` names the poststop tasks. */
export function allocClientStatus(states: Record<string, Pick<TaskState, 'State' | 'Failed'>>, poststop: ReadonlySet<string>): AllocStatus {
  let pending = false;
  let running = false;
  let dead = false;
  let failed = false;
  for (const [name, s] of Object.entries(states)) {
    switch (s.State) {
      case 'pending':
        if (!poststop.has(name)) pending = true;
        break;
      case 'running':
        running = true;
        break;
      case 'dead':
        if (s.Failed) failed = true;
        else dead = true;
        break;
      default: {
        const never: never = s.State;
        throw new Error(`unexpected task state ${String(never)}`);
      }
    }
  }
  if (failed) return { status: 'failed', description: 'Failed tasks' };
  if (pending) return { status: 'pending', description: 'No tasks have started' };
  if (running) return { status: 'running', description: 'Tasks are running' };
  if (dead) return { status: 'complete', description: 'All tasks have completed' };
  return { status: 'pending', description: 'No tasks have started' };
}
