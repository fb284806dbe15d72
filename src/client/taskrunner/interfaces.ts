/**
 * Task runner hook phases. A hook implements only the phase interfaces it needs; the task
 * runner (runHooks in task-runner.ts) owns the order. The lifecycle of one task:
 *
 *        ┌──────────────────── restart (after delay) ◄──────────────┐
 *        ▼                                                          │
 *   prestart hooks ──► driver.startTask ──► poststart hooks ──► wait for exit or kill
 *        │ error              │ error                               │
 *        └────────────────────┴──► restart tracker ◄── exited hooks ◄┘
 *                                        │ no restart
 *                                        ▼
 *                              task dead ──► stop hooks
 *
 *   kill:     pre-kill hooks → tracker marked killed → driver.stopTask (with backoff) → wait
 *   shutdown: the run loop returns, the task keeps running, shutdown hooks run
 *   update:   update hooks, serialized (a newer update replaces a pending one)
 */
import type { Allocation, TaskEvent } from '../../structs/alloc.js';
import type { TaskVariablesRequest, TaskVariablesResponse } from '../../structs/task-variables.js';
import type { SignIdentitiesRequest, SignedIdentity } from '../../structs/signed-identity.js';
import type { Task, TaskGroup } from '../../structs/job.js';
import type { Driver, ExitResult, TaskDirs, TaskHandle, TaskLogConfig, TaskMount } from '../../drivers/driver.js';
import type { AllocDir } from '../allocdir/alloc-dir.js';
import type { NodeInfo } from '../taskenv/task-env.js';

/** What every hook is told about its task. */
export interface TaskHookRequest {
  alloc: Allocation;
  group: TaskGroup;
  task: Task;
  allocDir: AllocDir;
  node: NodeInfo;
  driver: Driver;
  /** Aborted when the task is killed or the agent shuts down: long waits in hooks end. */
  signal: AbortSignal;
  /** What hooks may do to the running task (templates re-rendered by change_mode). */
  lifecycle: TaskLifecycle;
  /** Variables read for the task's templates from its servers (undefined: none reachable). */
  variables?: TaskVariableReader;
  /** Signs the task's workload identities on its servers (undefined: none reachable). */
  identities?: TaskIdentitySigner;
  /** The allocation's address in its group network namespace (bridge, cni/*), for NOMAD_ALLOC_IP_*. */
  allocAddress?: string;
}

/** Acting on the running task from a hook. */
export interface TaskLifecycle {
  restart(reason: string): Promise<void>;
  signal(sig: string, reason: string): Promise<void>;
  emit(ev: TaskEvent): void;
  /**
   * Runs `command` in the running task's environment through its driver's exec (no terminal,
   * output dropped) and resolves with its exit code; rejects when it cannot run or times out.
   */
  exec(command: string[], timeoutMs: number): Promise<number>;
  /** Kills the task, `reason` first in its events (FailsTask marks the task failed). */
  kill(reason: TaskEvent): Promise<void>;
}

/** Asks the servers to sign a task's workload identities (ServerConnection.signTaskIdentities). */
export type TaskIdentitySigner = (req: SignIdentitiesRequest, signal: AbortSignal) => Promise<SignedIdentity[]>;

/** Reads variables for a task (ServerConnection.readTaskVariables). */
export type TaskVariableReader = (req: TaskVariablesRequest, signal: AbortSignal) => Promise<TaskVariablesResponse>;

/** What prestart hooks contribute to the driver's TaskConfig; later hooks see earlier results. */
export interface TaskPrep {
  dirs: TaskDirs | null;
  env: Record<string, string>;
  driverConfig: Record<string, unknown>;
  logs: TaskLogConfig | null;
  /** Host volumes bound into the task (the volume hook's). */
  mounts?: TaskMount[];
}

/** Every hook has a name used in errors and logs. */
export interface TaskHook {
  readonly name: string;
}

/** Runs before the task starts (every start, including restarts). Returns its part of the prep. */
export interface PrestartHook extends TaskHook {
  prestart(req: TaskHookRequest, prep: Readonly<TaskPrep>): Promise<Partial<TaskPrep>>;
}

/** Runs after the driver has started (or reattached to) the task. */
export interface PoststartHook extends TaskHook {
  poststart(req: TaskHookRequest, handle: TaskHandle): Promise<void>;
}

/** Runs after the task exited, before the restart decision. */
export interface ExitedHook extends TaskHook {
  exited(req: TaskHookRequest, result: ExitResult | null): Promise<void>;
}

/** Runs once when the task is dead for good. */
export interface StopHook extends TaskHook {
  stop(req: TaskHookRequest): Promise<void>;
}

/** Runs before the task is killed. */
export interface PreKillHook extends TaskHook {
  preKill(req: TaskHookRequest): Promise<void>;
}

/** Runs when the allocation is updated by the servers. */
export interface UpdateHook extends TaskHook {
  update(req: TaskHookRequest): Promise<void>;
}

/** Runs when the agent shuts down while the task keeps running. */
export interface ShutdownHook extends TaskHook {
  shutdown(req: TaskHookRequest): Promise<void>;
}

/** Any task hook; the runner checks which phases each implements. */
export type AnyTaskHook = TaskHook &
  Partial<PrestartHook & PoststartHook & ExitedHook & StopHook & PreKillHook & UpdateHook & ShutdownHook>;
