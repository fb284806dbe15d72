/**
 * The client status of an allocation derived from its task states, as Nomad's alloc runner
 * derives it: failed if any task failed; else running while any task runs; else pending while
 * any task has not started; else complete. A poststop task that has not run yet therefore keeps
 * an allocation whose other tasks are all dead pending, never briefly "complete" before it runs.
 */
import type { AllocClientStatus, TaskState } from '../../structs/alloc.js';
import { MAX_RUN_DURATION_REASON, killedByMaxRunDuration } from '../taskrunner/hooks/max-run-duration-hook.js';

/** The status and Nomad's description for it. */
export interface AllocStatus {
  status: AllocClientStatus;
  description: string;
}

/** Derives the allocation's client status from its task states. */
export function allocClientStatus(states: Record<string, Pick<TaskState, 'State' | 'Failed'> & { Events?: TaskState['Events'] }>): AllocStatus {
  let pending = false;
  let running = false;
  let dead = false;
  let failed = false;
  for (const s of Object.values(states)) {
    switch (s.State) {
      case 'pending':
        pending = true;
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
  if (running) return { status: 'running', description: 'Tasks are running' };
  if (pending) return { status: 'pending', description: 'No tasks have started' };
  if (dead) {
    // Nomad names the cause when max_run_duration ended the allocation.
    const timedOut = Object.values(states).some(killedByMaxRunDuration);
    return { status: 'complete', description: timedOut ? MAX_RUN_DURATION_REASON : 'All tasks have completed' };
  }
  return { status: 'pending', description: 'No tasks have started' };
}
