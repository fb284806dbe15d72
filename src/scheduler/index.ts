/**
 * The pure scheduler: pick a SchedulerFactory by job type. Workers call schedulerFactoryFor
 * with the evaluation's Type and run the scheduler it builds against a snapshot and a planner.
 */
import type { SchedulerFactory } from './interfaces.js';
import { GenericScheduler } from './generic-scheduler.js';
import { SystemScheduler } from './system-scheduler.js';

export type { Planner, Scheduler, SchedulerContext, SchedulerFactory, SchedulerState } from './interfaces.js';
export { tasksUpdated } from './tasks-updated.js';

/** The factory for a scheduler type ("service", "batch", "system", "sysbatch"), or undefined. */
export function schedulerFactoryFor(type: string): SchedulerFactory | undefined {
  switch (type) {
    case 'service':
      return (state, planner, ctx) => new GenericScheduler(state, planner, ctx, false);
    case 'batch':
      return (state, planner, ctx) => new GenericScheduler(state, planner, ctx, true);
    case 'system':
      return (state, planner, ctx) => new SystemScheduler(state, planner, ctx, false);
    case 'sysbatch':
      return (state, planner, ctx) => new SystemScheduler(state, planner, ctx, true);
    default:
      return undefined;
  }
}
