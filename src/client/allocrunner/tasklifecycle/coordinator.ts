/**
 * The task lifecycle coordinator: a pure state machine that says which tasks of an
 * allocation may start, given the states of all its tasks.
 *
 *   init ──► prestart ──► main ──► poststart ──► wait_alloc ──► poststop
 *     (every state jumps to poststop once all non-poststop tasks are dead)
 *
 * Each lifecycle stage has one gate. A state opens some gates and closes the others:
 *
 *   state       prestart  prestart  main  poststart  poststart  poststop
 *               ephemeral sidecar         ephemeral  sidecar
 *   init           -         -       -       -          -          -
 *   prestart       open      open    -       -          -          -
 *   main           -         open    open    -          -          -
 *   poststart      -         open    open    open       open       -
 *   wait_alloc     -         open    open    -          open       -
 *   poststop       -         -       -       -          -          open
 *
 * The caller (the alloc runner) feeds task states in with `taskStatesUpdated` and asks
 * `isAllowed(task)`; it owns any waiting. `skipPoststop()` keeps the poststop gate shut for
 * good: an allocation max_run_duration ended runs no poststop task, as Nomad's. A restored allocation skips init, whose only
 * purpose is to wait for every task to be pending.
 */
import type { Task } from '../../../structs/job.js';
import type { TaskState } from '../../../structs/alloc.js';

/** The coordinator's states. */
export const CoordinatorState = {
  Init: 'init',
  Prestart: 'prestart',
  Main: 'main',
  Poststart: 'poststart',
  WaitAlloc: 'wait_alloc',
  Poststop: 'poststop',
} as const;
export type CoordinatorState = (typeof CoordinatorState)[keyof typeof CoordinatorState];

/** The lifecycle stage of a task: its hook and whether it is a sidecar. */
export const LifecycleStage = {
  PrestartEphemeral: 'prestart_ephemeral',
  PrestartSidecar: 'prestart_sidecar',
  Main: 'main',
  PoststartEphemeral: 'poststart_ephemeral',
  PoststartSidecar: 'poststart_sidecar',
  Poststop: 'poststop',
} as const;
export type LifecycleStage = (typeof LifecycleStage)[keyof typeof LifecycleStage];

/** The stage of a task from its lifecycle block. */
export function taskLifecycleStage(task: Pick<Task, 'Lifecycle'>): LifecycleStage {
  const lc = task.Lifecycle;
  if (!lc || !lc.Hook) return LifecycleStage.Main;
  switch (lc.Hook) {
    case 'prestart':
      return lc.Sidecar ? LifecycleStage.PrestartSidecar : LifecycleStage.PrestartEphemeral;
    case 'poststart':
      return lc.Sidecar ? LifecycleStage.PoststartSidecar : LifecycleStage.PoststartEphemeral;
    case 'poststop':
      return LifecycleStage.Poststop;
    default:
      return LifecycleStage.Main;
  }
}

const OPEN_STAGES: Record<CoordinatorState, readonly LifecycleStage[]> = {
  init: [],
  prestart: [LifecycleStage.PrestartEphemeral, LifecycleStage.PrestartSidecar],
  main: [LifecycleStage.PrestartSidecar, LifecycleStage.Main],
  poststart: [
    LifecycleStage.PrestartSidecar,
    LifecycleStage.Main,
    LifecycleStage.PoststartEphemeral,
    LifecycleStage.PoststartSidecar,
  ],
  wait_alloc: [LifecycleStage.PrestartSidecar, LifecycleStage.Main, LifecycleStage.PoststartSidecar],
  poststop: [LifecycleStage.Poststop],
};

type States = Record<string, Pick<TaskState, 'State' | 'Failed'> | undefined>;

/** Coordinates task start order for one allocation. Not thread-safe; one caller. */
export class Coordinator {
  private current: CoordinatorState = CoordinatorState.Init;
  private poststopSkipped = false;
  private readonly byStage = new Map<LifecycleStage, string[]>();
  private readonly stageOf = new Map<string, LifecycleStage>();

  constructor(tasks: readonly Pick<Task, 'Name' | 'Lifecycle'>[]) {
    for (const t of tasks) {
      const stage = taskLifecycleStage(t);
      this.stageOf.set(t.Name, stage);
      const list = this.byStage.get(stage) ?? [];
      list.push(t.Name);
      this.byStage.set(stage, list);
    }
  }

  /** The current state. */
  state(): CoordinatorState {
    return this.current;
  }

  /** Whether the named task may start now. Unknown tasks may not. */
  isAllowed(taskName: string): boolean {
    const stage = this.stageOf.get(taskName);
    if (stage === LifecycleStage.Poststop && this.poststopSkipped) return false;
    return stage !== undefined && OPEN_STAGES[this.current].includes(stage);
  }

  /**
   * Never lets a poststop task start from now on (the allocation's deadline ended it). The
   * caller kills the poststop tasks, which are then dead without having started. Idempotent.
   */
  skipPoststop(): void {
    this.poststopSkipped = true;
  }

  /** The poststop tasks, whose start skipPoststop() forbids. */
  poststopTasks(): readonly string[] {
    return this.tasks(LifecycleStage.Poststop);
  }

  /** Goes back to init, for a whole-allocation restart. */
  restart(): void {
    this.current = CoordinatorState.Init;
  }

  /** Positions the machine for a restored allocation: skips init, then catches up. */
  restore(states: States): CoordinatorState {
    this.current = CoordinatorState.Prestart;
    return this.taskStatesUpdated(states);
  }

  /** Advances through as many states as the task states allow; returns the new state. */
  taskStatesUpdated(states: States): CoordinatorState {
    for (;;) {
      const next = this.nextState(states);
      if (next === this.current) return next;
      this.current = next;
    }
  }

  private nextState(states: States): CoordinatorState {
    if (this.allNonPoststopDead(states)) return CoordinatorState.Poststop;
    switch (this.current) {
      case 'init':
        return Object.values(states).every((s) => !s || s.State === 'pending') ? 'prestart' : 'init';
      case 'prestart':
        return this.prestartDone(states) ? 'main' : 'prestart';
      case 'main':
        return this.tasks(LifecycleStage.Main).every((t) => stateOf(states, t) !== 'pending') ? 'poststart' : 'main';
      case 'poststart':
        return this.tasks(LifecycleStage.PoststartEphemeral).every((t) => stateOf(states, t) === 'dead')
          ? 'wait_alloc'
          : 'poststart';
      case 'wait_alloc':
        return 'wait_alloc';
      case 'poststop':
        return 'poststop';
      default: {
        const never: never = this.current;
        throw new Error(`unexpected coordinator state ${String(never)}`);
      }
    }
  }

  private prestartDone(states: States): boolean {
    // An ephemeral prestart task must have completed successfully; a sidecar must be running.
    const ephemeralOk = this.tasks(LifecycleStage.PrestartEphemeral).every((t) => {
      const s = states[t];
      return s !== undefined && s.State === 'dead' && !s.Failed;
    });
    const sidecarsOk = this.tasks(LifecycleStage.PrestartSidecar).every((t) => stateOf(states, t) === 'running');
    return ephemeralOk && sidecarsOk;
  }

  private allNonPoststopDead(states: States): boolean {
    for (const [name, stage] of this.stageOf) {
      if (stage === LifecycleStage.Poststop) continue;
      if (stateOf(states, name) !== 'dead') return false;
    }
    return true;
  }

  private tasks(stage: LifecycleStage): string[] {
    return this.byStage.get(stage) ?? [];
  }
}

function stateOf(states: States, name: string): string {
  return states[name]?.State ?? 'pending';
}
