/**
 * The task runner: runs one task of an allocation through its whole life (see the diagram in
 * interfaces.ts). It starts the task through its driver, waits for it, asks the restart
 * tracker what to do when it stops, keeps the TaskState with its capped events, and persists
 * state and driver handle on every transition so an agent restart can reattach.
 *
 * Two ways to stop it: `kill()` stops the task (Killing/Killed events), `shutdown()` only
 * stops the runner and leaves the task running for the next agent to reattach.
 */
import type { Logger } from 'pino';
import type { Allocation, TaskEvent, TaskState } from '../../structs/alloc.js';
import { TaskEventType } from '../../structs/alloc.js';
import type { JobType, RestartPolicy, Task, TaskGroup } from '../../structs/job.js';
import { formatDuration, msToNanos, nanosToMs, parseDuration } from '../../structs/duration.js';
import type { Clock, RandomSource } from '../../time/clock.js';
import { FsIsolation, type Driver, type ExitResult, type NetworkIsolation, type TaskConfig, type TaskHandle, type TaskResourceUsage } from '../../drivers/driver.js';
import { runExecSpec } from '../../drivers/run-exec-spec.js';
import type { AllocDir } from '../allocdir/alloc-dir.js';
import type { NodeInfo } from '../taskenv/task-env.js';
import type { ClientStateStore, StoredTask } from '../state/state-db.js';
import { ClientError, ClientErrorCode, errorMessage, isRecoverable } from '../client-error.js';
import { RestartDecision, RestartTracker } from './restarts/restart-tracker.js';
import { appendTaskEvent, newTaskEvent, newTaskState } from './task-event.js';
import { logTaskEvent } from './task-event-log.js';
import { killWithBackoff } from './kill-backoff.js';
import type { AnyTaskHook, TaskHookRequest, TaskLifecycle, TaskIdentitySigner, TaskPrep, TaskVariableReader } from './interfaces.js';
import { ValidateHook } from './hooks/validate-hook.js';
import { VolumeHook } from './hooks/volume-hook.js';
import { TaskDirHook } from './hooks/task-dir-hook.js';
import { DispatchPayloadHook } from './hooks/dispatch-payload-hook.js';
import { LogsHook } from './hooks/logs-hook.js';
import { EnvHook } from './hooks/env-hook.js';
import { StatsHook } from './hooks/stats-hook.js';
import { ArtifactHook } from './hooks/artifact-hook.js';
import { TemplateHook } from './hooks/template-hook.js';
import { IdentityHook } from './hooks/identity-hook.js';
import { TaskApiHook, type TaskApiConnections } from './hooks/task-api-hook.js';
import { DefaultIdentity } from './default-identity.js';
import { MaxRunDurationHook } from './hooks/max-run-duration-hook.js';
import { TaskSetupError } from './task-setup-error.js';
import type { TaskUserPolicy } from './task-user-policy.js';
import { ExitCause, restoredExit, type RestoredExit } from './restored-exit.js';
import { NO_HOST_ENV, type HostEnvLookup } from '../taskenv/host-env.js';

/** Nomad's default kill timeout. */
const DEFAULT_KILL_TIMEOUT_MS = 5_000;

/** Everything a task runner depends on. */
export interface TaskRunnerConfig {
  alloc: Allocation;
  task: Task;
  allocDir: AllocDir;
  driver: Driver;
  node: NodeInfo;
  store: ClientStateStore;
  clock: Clock;
  random: RandomSource;
  logger: Logger;
  /** Called (synchronously) after every change of the task's state. */
  onStateChange: (taskName: string, state: TaskState) => void;
  /** Resolves when the lifecycle coordinator lets the task start; rejects if aborted. */
  waitForStart?: (signal: AbortSignal) => Promise<void>;
  /** State loaded from the state DB when restoring after an agent restart. */
  restored?: StoredTask;
  /** The agent's environment as the task may read it (filtered by the client's env.denylist); never for an image driver. */
  hostEnv?: HostEnvLookup;
  /** Overrides the default hooks (tests). */
  hooks?: AnyTaskHook[];
  /** Reads variables for the task's templates from the servers. */
  variables?: TaskVariableReader;
  /** Signs the task's workload identities on the servers. */
  identities?: TaskIdentitySigner;
  /** The client's user.denylist / user.checked_drivers; Nomad's defaults when not given. */
  userPolicy?: TaskUserPolicy;
  /**
   * The allocation's group network namespace for the task to join (null in host mode), asked
   * before each start; throws when the alloc runner could not set it up (the start fails).
   */
  groupNetwork?: () => Promise<NetworkIsolation | null>;
  /** The agent's Task API: with it, the task gets `secrets/api.sock` (task-api-hook.ts). */
  taskApi?: TaskApiConnections;
}

/** The restart policy of a task: its own, else its group's, else Nomad's default for the job type. */
export function effectiveRestartPolicy(task: Task, group: TaskGroup | undefined, jobType: JobType): RestartPolicy {
  if (task.RestartPolicy) return task.RestartPolicy;
  if (group?.RestartPolicy) return group.RestartPolicy;
  return jobType === 'batch' || jobType === 'sysbatch'
    ? { Attempts: 3, Interval: parseDuration('24h'), Delay: parseDuration('15s'), Mode: 'fail' }
    : { Attempts: 2, Interval: parseDuration('30m'), Delay: parseDuration('15s'), Mode: 'fail' };
}

/** Runs one task. Create, optionally `restore()`, then `run()`. */
export class TaskRunner {
  readonly taskName: string;
  /** The template variable reader, presenting the task's default identity when the servers sign one. */
  private readonly variables: TaskVariableReader | undefined;
  private alloc: Allocation;
  private readonly task: Task;
  private readonly group: TaskGroup;
  private readonly tracker: RestartTracker;
  /** The agent log of this task: every line names the allocation and the task. */
  private readonly log: Logger;
  private taskState: TaskState;
  private handle: TaskHandle | null = null;
  private exitPromise: Promise<ExitResult> | null = null;
  private readonly hooks: AnyTaskHook[];
  private readonly stats: StatsHook | null;
  private readonly killCtl = new AbortController();
  private readonly shutdownCtl = new AbortController();
  /** Cuts a running shutdown_delay short (an update asking for NoShutdownDelay). */
  private readonly shutdownDelayCut = new AbortController();
  /**
   * Aborts when the runner is killed or shut down; made once. Every AbortSignal.any() leaves a
   * weak reference in its sources' dependant sets that Node 20 never removes, so one made per
   * hook call (12 hooks a phase, every alloc update) grew each runner for as long as it lived.
   */
  private stopSig: AbortSignal | null = null;
  /** The runner's configuration without the allocation it was created with (see the constructor). */
  private readonly cfg: Omit<TaskRunnerConfig, 'alloc'>;
  private killErr: string | null = null;
  private done: Promise<void> | null = null;
  private pendingUpdate: Allocation | null = null;
  /** An exit the previous agent recorded but did not decide on; the run loop replays it. */
  private restoredExitToReplay: RestoredExit | null = null;
  /** The reattach to a restored task, once started; kill() waits for it. */
  private restoring: Promise<void> | null = null;
  private updating = false;
  /** What hooks may do to the running task. */
  private readonly lifecycle: TaskLifecycle = {
    restart: (reason) => this.restart(reason),
    signal: (sig, reason) => this.signal(sig, reason),
    emit: (ev) => this.emitEvent(ev),
    exec: (command, timeoutMs) => this.execInTask(command, timeoutMs),
    kill: (reason) => this.kill(reason),
  };

  constructor(config: TaskRunnerConfig) {
    // Only the newest version of the allocation is kept (this.alloc): holding on to the one the
    // runner was created with kept a second copy of every updated allocation for its lifetime.
    const cfg = config;
    const { alloc: _created, ...rest } = config;
    this.cfg = rest;
    this.alloc = cfg.alloc;
    this.task = cfg.task;
    this.taskName = cfg.task.Name;
    if (cfg.variables) {
      const read = cfg.variables;
      // Template reads go under the task's own identity (Nomad's way) when its servers sign one.
      const identity = cfg.identities ? new DefaultIdentity(cfg.identities, cfg.alloc.ID, cfg.task.Name, cfg.clock) : null;
      this.variables = identity ? async (req, signal) => read({ ...req, Identity: await identity.get(signal) }, signal) : read;
    }
    this.log = cfg.logger.child({ alloc_id: cfg.alloc.ID, task: cfg.task.Name });
    // No closure here may name `cfg` (the created allocation): it would keep it alive.
    const groupName = cfg.alloc.TaskGroup;
    const group = cfg.alloc.Job?.TaskGroups.find((g) => g.Name === groupName);
    this.group = group ?? ({ Name: cfg.alloc.TaskGroup, Meta: null, RestartPolicy: null } as unknown as TaskGroup);
    const jobType = cfg.alloc.Job?.Type ?? 'service';
    this.tracker = new RestartTracker(effectiveRestartPolicy(cfg.task, group, jobType), jobType, cfg.random, cfg.clock.now(), cfg.task.Lifecycle ?? null);
    this.taskState = cfg.restored?.state ? structuredClone(cfg.restored.state) : newTaskState();
    if (cfg.hooks) {
      this.hooks = cfg.hooks;
      this.stats = null;
    } else {
      this.stats = new StatsHook(cfg.clock);
      // As Nomad (SetHostEnvvars for non-image drivers only): a task in a container image does
      // not see the agent's environment through `${env.X}`; raw_exec and exec do.
      const hostEnv = cfg.driver.capabilities().fsIsolation === FsIsolation.Image ? NO_HOST_ENV : (cfg.hostEnv ?? NO_HOST_ENV);
      this.hooks = [new ValidateHook(cfg.userPolicy), new TaskDirHook(), new VolumeHook(), new DispatchPayloadHook(), new LogsHook(), new EnvHook(hostEnv), new IdentityHook(cfg.clock), ...(cfg.taskApi ? [new TaskApiHook(cfg.taskApi, this.log)] : []), new ArtifactHook(), new TemplateHook(hostEnv, cfg.clock, cfg.random), this.stats, new MaxRunDurationHook(cfg.clock)];
    }
  }

  /**
   * A copy of the task's current state. Its events are the runner's own objects, not copies:
   * an event is never changed once appended, and the alloc runner keeps this copy for every
   * task (a deep copy held each of up to ten events twice).
   */
  state(): TaskState {
    return { ...this.taskState, Events: [...this.taskState.Events] };
  }

  /** The driver handle while the task runs, else null. */
  driverHandle(): TaskHandle | null {
    return this.handle;
  }

  /** The task definition. */
  taskDef(): Task {
    return this.task;
  }

  /** Whether the task is the group's leader. */
  isLeader(): boolean {
    return this.task.Leader;
  }

  /** The latest resource usage sample, or null. */
  latestUsage(): TaskResourceUsage | null {
    return this.stats?.latestUsage() ?? null;
  }

  /**
   * Reattaches to the task recorded in the state DB, if any: on success the task counts as
   * running (same StartedAt, no new event); on failure the handle is dropped and the task will
   * be started again. A task whose exit was recorded (Terminated) but not yet decided on is
   * not started again: run() hands that exit to the restart tracker. Call before run().
   * Idempotent: later calls wait for the first.
   */
  restore(): Promise<void> {
    this.restoring ??= this.reattach();
    return this.restoring;
  }

  private async reattach(): Promise<void> {
    const h = this.cfg.restored?.handle ?? null;
    if (this.taskState.State === 'dead') return;
    const exited = restoredExit(this.taskState);
    if (exited) {
      // The task is gone; whatever the handle names (if it was not dropped yet) is finished.
      if (h) await this.cfg.driver.destroyTask(h.taskId, true).catch(() => undefined);
      this.setHandle(null);
      this.restoredExitToReplay = exited;
      return;
    }
    if (!h) return;
    try {
      await this.cfg.driver.recoverTask(h);
      this.setHandle(h);
    } catch (err) {
      this.cfg.logger.warn({ task: this.taskName, err: errorMessage(err) }, 'could not reattach to task; it will be started again');
      await this.cfg.driver.destroyTask(h.taskId, true).catch(() => undefined);
      this.setHandle(null);
      if (this.taskState.State === 'running') this.setState('pending');
    }
  }

  /** Runs the task until it is dead, killed or the runner is shut down. Idempotent. */
  run(): Promise<void> {
    this.done ??= this.runLoop().catch((err: unknown) => {
      this.cfg.logger.error({ task: this.taskName, err: errorMessage(err) }, 'task runner failed');
      if (this.taskState.State !== 'dead') this.setState('dead', newTaskEvent(TaskEventType.DriverFailure, this.now(), { DriverError: errorMessage(err), FailsTask: true }));
    });
    return this.done;
  }

  /** Resolves when the run loop has returned. */
  async wait(): Promise<void> {
    await (this.done ?? Promise.resolve());
  }

  /**
   * Kills the task: emits `reason` (e.g. "Sibling Task Failed") if given, stops the run loop
   * and the task, and resolves once the runner is done. Idempotent. On a restored runner it
   * first finishes (or performs) the reattach, so a task still running from the previous
   * agent is stopped rather than left without an owner.
   */
  async kill(reason?: TaskEvent): Promise<void> {
    if (reason) this.emitEvent(reason);
    if (!this.killCtl.signal.aborted) this.killCtl.abort();
    if (this.cfg.restored) {
      await this.restore().catch((err: unknown) => this.cfg.logger.warn({ task: this.taskName, err: errorMessage(err) }, 'reattach before kill failed'));
    }
    if (!this.done) {
      // Reattached but not run yet: the run loop's kill path (handleKill) stops the task.
      if (this.handle) return this.run();
      // Never ran: it is dead without ever starting.
      if (this.taskState.State !== 'dead') this.setState('dead');
      return;
    }
    await this.done;
  }

  /** Stops the runner and leaves the task running (agent shutdown). No kill events. */
  async shutdown(): Promise<void> {
    if (!this.shutdownCtl.signal.aborted) this.shutdownCtl.abort();
    await this.done;
    await this.runHooks('shutdown', (h) => h.shutdown?.(this.hookRequest()));
  }

  /**
   * Restarts the running task in place ("Restart Signaled"); `failure` counts it against the
   * restart policy. Throws ClientError TaskNotRunning when the task is not running.
   */
  async restart(reason: string, failure = false): Promise<void> {
    const h = this.handle;
    if (!h) throw new ClientError(ClientErrorCode.TaskNotRunning, `task "${this.taskName}" is not running`);
    this.emitEvent(newTaskEvent(TaskEventType.RestartSignal, this.now(), { RestartReason: reason }));
    this.tracker.setRestartTriggered(failure);
    await this.stopDriverTask(h);
  }

  /** Sends a signal to the running task ("Signaling"). */
  async signal(sig: string, reason = ''): Promise<void> {
    const h = this.handle;
    if (!h) throw new ClientError(ClientErrorCode.TaskNotRunning, `task "${this.taskName}" is not running`);
    this.emitEvent(newTaskEvent(TaskEventType.Signaling, this.now(), { TaskSignal: sig, TaskSignalReason: reason }));
    await this.cfg.driver.signalTask(h.taskId, sig);
  }

  /** Runs a command in the running task through the driver's exec (a template's change script). */
  private async execInTask(command: string[], timeoutMs: number): Promise<number> {
    const h = this.handle;
    if (!h) throw new ClientError(ClientErrorCode.TaskNotRunning, `task "${this.taskName}" is not running`);
    return runExecSpec(this.cfg.driver.execSpec(h.taskId, command), timeoutMs);
  }

  /**
   * Takes the version of the allocation that stops it, without running update hooks: the kill
   * reads its DesiredTransition (NoShutdownDelay skips the task's shutdown_delay).
   */
  takeStoppingAlloc(alloc: Allocation): void {
    this.pendingUpdate = null;
    this.alloc = alloc;
    if (alloc.DesiredTransition?.NoShutdownDelay) this.shutdownDelayCut.abort();
  }

  /** Applies a new version of the allocation; update hooks run serially, the newest wins. */
  update(alloc: Allocation): void {
    this.pendingUpdate = alloc;
    if (this.updating) return;
    this.updating = true;
    void (async () => {
      while (this.pendingUpdate) {
        this.alloc = this.pendingUpdate;
        this.pendingUpdate = null;
        await this.runHooks('update', (h) => h.update?.(this.hookRequest()));
      }
      this.updating = false;
    })();
  }

  /** Appends an event and persists the state. */
  emitEvent(ev: TaskEvent): void {
    appendTaskEvent(this.taskState, ev);
    logTaskEvent(this.log, ev);
    this.persistState();
  }

  // ---- the run loop ----

  private async runLoop(): Promise<void> {
    if (this.taskState.State === 'dead') return;
    if (this.taskState.Events.length === 0) {
      // Reported now, written with the next state write ("Task Setup", at once unless the task
      // waits for its lifecycle turn, or its death): one fsync fewer before the task starts. A
      // crash before that write only loses this event, which the next agent emits again.
      const received = newTaskEvent(TaskEventType.Received, this.now());
      appendTaskEvent(this.taskState, received);
      logTaskEvent(this.log, received);
      this.cfg.onStateChange(this.taskName, this.state());
    }

    if (!this.handle && !this.restoredExitToReplay && this.cfg.waitForStart) {
      const outcome = await this.race(this.cfg.waitForStart(this.killCtl.signal).then(() => 'go' as const, () => 'killed' as const));
      if (outcome === 'shutdown') return;
      if (outcome === 'killed') return this.finish();
    }

    for (;;) {
      if (this.shutdownCtl.signal.aborted) return;
      if (this.killCtl.signal.aborted) break;

      let result: ExitResult | null = null;
      let startFailed = false;
      const replayed = this.replayRestoredExit();
      if (!replayed && !this.handle) {
        startFailed = !(await this.startTask());
      }
      if (!replayed && !startFailed && this.handle) {
        const handle: TaskHandle = this.handle;
        await this.runHooks('poststart', (h) => h.poststart?.(this.hookRequest(), handle));
        const exitP = this.exitPromise ?? this.cfg.driver.waitTask(handle.taskId);
        this.exitPromise = exitP;
        const outcome = await this.race(exitP.then((r) => ({ exit: r })));
        if (outcome === 'shutdown') return;
        result = outcome === 'killed' ? await this.handleKill() : outcome.exit;
        this.emitExitEvent(result);
        await this.clearHandle();
        if (result) this.tracker.setExitResult(result);
        const exitResult = result;
        await this.runHooks('exited', (h) => h.exited?.(this.hookRequest(), exitResult));
      }

      const answer = this.tracker.next(this.now());
      if (answer.decision === RestartDecision.Killed || answer.decision === RestartDecision.Terminated) break;
      if (answer.decision === RestartDecision.NoRestart) {
        this.setState('dead', newTaskEvent(TaskEventType.NotRestarting, this.now(), { RestartReason: answer.reason, FailsTask: true }));
        break;
      }
      this.setState('pending', newTaskEvent(TaskEventType.Restarting, this.now(), { StartDelay: msToNanos(answer.delayMs), RestartReason: answer.reason }));
      const slept = await this.race(this.cfg.clock.sleep(answer.delayMs, this.stopSignal()).then(() => 'slept' as const, () => 'slept' as const));
      if (slept === 'shutdown') return;
      if (slept === 'killed') break;
    }
    await this.finish();
  }

  /**
   * Tells the restart tracker about the exit restored from the state DB, once; true when
   * there was one (the loop then decides instead of starting the task).
   */
  private replayRestoredExit(): boolean {
    const replay = this.restoredExitToReplay;
    if (!replay) return false;
    this.restoredExitToReplay = null;
    switch (replay.cause) {
      case ExitCause.Killed:
        this.tracker.setKilled();
        break;
      case ExitCause.RestartSignaled:
        this.tracker.setRestartTriggered(false);
        break;
      case ExitCause.Exited:
        break;
      default: {
        const never: never = replay.cause;
        throw new Error(`unknown exit cause ${String(never)}`);
      }
    }
    this.tracker.setExitResult(replay.result);
    return true;
  }

  /** Common ending: make sure the task is gone, mark dead, run stop hooks. */
  private async finish(): Promise<void> {
    if (this.handle) {
      const result = await this.handleKill();
      this.emitExitEvent(result);
      await this.clearHandle();
      await this.runHooks('exited', (h) => h.exited?.(this.hookRequest(), result));
    }
    this.setState('dead');
    await this.runHooks('stop', (h) => h.stop?.(this.hookRequest()));
  }

  /** Runs prestart hooks and starts the task; false when either failed (tracker informed). */
  private async startTask(): Promise<boolean> {
    let prep: TaskPrep = { dirs: null, env: {}, driverConfig: this.task.Config ?? {}, logs: null };
    if (this.taskState.Events.every((e) => e.Type !== TaskEventType.Setup)) {
      this.emitEvent(newTaskEvent(TaskEventType.Setup, this.now(), { Message: 'Building Task Directory' }));
    }
    let isolation: NetworkIsolation | null = null;
    try {
      isolation = (await this.cfg.groupNetwork?.()) ?? null;
    } catch (err) {
      const msg = `pre-run hook "network" failed: ${errorMessage(err)}`;
      this.cfg.logger.error({ task: this.taskName, err: msg }, 'group network set-up failed');
      this.emitEvent(newTaskEvent(TaskEventType.SetupFailure, this.now(), { SetupError: msg, FailsTask: !isRecoverable(err) }));
      this.tracker.setStartError({ recoverable: isRecoverable(err) });
      return false;
    }
    for (const hook of this.hooks) {
      if (!hook.prestart) continue;
      try {
        prep = { ...prep, ...(await hook.prestart({ ...this.hookRequest(), ...(isolation ? { allocAddress: isolation.address } : {}) }, prep)) };
      } catch (err) {
        const msg = `prestart hook "${hook.name}" failed: ${errorMessage(err)}`;
        this.cfg.logger.error({ task: this.taskName, err: msg }, 'prestart failed');
        this.emitEvent(
          err instanceof TaskSetupError
            ? newTaskEvent(TaskEventType.SetupFailure, this.now(), { SetupError: err.message, FailsTask: true })
            : newTaskEvent(TaskEventType.HookFailed, this.now(), { Message: msg }),
        );
        this.tracker.setStartError({ recoverable: isRecoverable(err) });
        return false;
      }
    }
    const dirs = prep.dirs ?? this.cfg.allocDir.taskDirs(this.taskName);
    const config: TaskConfig = {
      id: `${this.alloc.ID}/${this.taskName}`,
      allocId: this.alloc.ID,
      taskName: this.taskName,
      jobName: this.alloc.Job?.Name ?? this.alloc.JobID,
      groupName: this.alloc.TaskGroup,
      driverConfig: prep.driverConfig,
      env: prep.env,
      user: this.task.User ?? '',
      dirs,
      resources: this.resources(),
      logs: prep.logs ?? { dir: dirs.logDir, maxFiles: 10, maxFileSizeMB: 10 },
      networkMode: this.group.Networks?.[0]?.Mode || 'host',
      ...(isolation ? { networkIsolation: isolation } : {}),
      ...(prep.mounts && prep.mounts.length > 0 ? { mounts: prep.mounts } : {}),
    };
    let handle: TaskHandle;
    try {
      handle = await this.cfg.driver.startTask(config, {
        emit: (message) => this.emitEvent(newTaskEvent(TaskEventType.DriverMessage, this.now(), { DriverMessage: message })),
      });
    } catch (err) {
      this.emitEvent(newTaskEvent(TaskEventType.DriverFailure, this.now(), { DriverError: errorMessage(err) }));
      this.tracker.setStartError({ recoverable: isRecoverable(err) });
      return false;
    }
    this.exitPromise = null;
    // The handle and the Started state are one write: one fsync (not two) between the driver's
    // answer and the "running" report, and no crash can leave a handle recorded for a task that
    // was never marked started (a reattach would then run it with no StartedAt).
    this.handle = handle;
    this.setState('running', newTaskEvent(TaskEventType.Started, this.now()), handle);
    return true;
  }

  /** Pre-kill hooks, tracker marked killed, shutdown delay, stop with backoff, wait for exit. */
  private async handleKill(): Promise<ExitResult | null> {
    await this.runHooks('preKill', (h) => h.preKill?.(this.hookRequest()));
    this.tracker.setKilled();
    const h = this.handle;
    if (!h) return null;
    const exitedDuringDelay = await this.shutdownDelay(h);
    if (exitedDuringDelay) return exitedDuringDelay;
    const timeoutMs = this.killTimeoutMs();
    this.emitEvent(newTaskEvent(TaskEventType.Killing, this.now(), { KillTimeout: msToNanos(timeoutMs) }));
    const err = await this.stopDriverTask(h);
    if (err) this.killErr = errorMessage(err);
    const exitP = this.exitPromise ?? this.cfg.driver.waitTask(h.taskId);
    const result = await exitP.catch((e: unknown): ExitResult => ({ exitCode: -1, signal: 0, oomKilled: false, err: errorMessage(e) }));
    this.emitEvent(newTaskEvent(TaskEventType.Killed, this.now(), this.killErr ? { KillError: this.killErr } : {}));
    return result;
  }

  /**
   * The task's shutdown_delay before it is killed, as Nomad's: announced with a "Waiting for
   * shutdown delay" event, skipped ("Skipping shutdown delay") when the stopping allocation says
   * NoShutdownDelay, cut short by such an update arriving meanwhile or by the agent shutting
   * down. Answers the exit when the task exits during the delay (it is not killed then).
   */
  private async shutdownDelay(h: TaskHandle): Promise<ExitResult | undefined> {
    const delay = this.task.ShutdownDelay ?? 0;
    if (delay <= 0) return undefined;
    const shown = formatDuration(delay);
    if (this.alloc.DesiredTransition?.NoShutdownDelay) {
      this.emitEvent(newTaskEvent(TaskEventType.SkippingShutdownDelay, this.now(), { Message: `Skipping shutdown_delay of ${shown} before killing the task.` }));
      return undefined;
    }
    this.emitEvent(newTaskEvent(TaskEventType.WaitingShutdownDelay, this.now(), { Message: `Waiting for shutdown_delay of ${shown} before killing the task.` }));
    const exitP = this.exitPromise ?? this.cfg.driver.waitTask(h.taskId);
    this.exitPromise = exitP;
    const done = new AbortController();
    const slept = this.cfg.clock.sleep(nanosToMs(delay), AbortSignal.any([done.signal, this.shutdownCtl.signal, this.shutdownDelayCut.signal]));
    try {
      return await Promise.race([exitP.catch(() => undefined), slept.then(() => undefined, () => undefined)]);
    } finally {
      done.abort();
    }
  }

  /** Aborts when the runner is killed or shut down. */
  private stopSignal(): AbortSignal {
    this.stopSig ??= AbortSignal.any([this.killCtl.signal, this.shutdownCtl.signal]);
    return this.stopSig;
  }

  private stopDriverTask(h: TaskHandle): Promise<Error | null> {
    const sig = this.task.KillSignal || 'SIGINT';
    return killWithBackoff(() => this.cfg.driver.stopTask(h.taskId, this.killTimeoutMs(), sig), this.cfg.clock, this.shutdownCtl.signal);
  }

  private killTimeoutMs(): number {
    return this.task.KillTimeout > 0 ? nanosToMs(this.task.KillTimeout) : DEFAULT_KILL_TIMEOUT_MS;
  }

  private emitExitEvent(result: ExitResult | null): void {
    if (!result) return;
    const fields: Partial<TaskEvent> = { ExitCode: result.exitCode, Signal: result.signal };
    if (result.oomKilled) {
      fields.Message = 'OOM Killed';
      fields.Details = { oom_killed: 'true' };
    } else if (result.err) {
      fields.Message = result.err;
    }
    this.emitEvent(newTaskEvent(TaskEventType.Terminated, this.now(), fields));
  }

  /** Waits for `p`, or returns 'killed'/'shutdown' when the runner is told to stop first. */
  private race<T>(p: Promise<T>): Promise<T | 'killed' | 'shutdown'> {
    const kill = this.killCtl.signal;
    const shut = this.shutdownCtl.signal;
    if (shut.aborted) return Promise.resolve('shutdown');
    if (kill.aborted) return Promise.resolve('killed');
    return new Promise((resolve, reject) => {
      const onKill = (): void => resolve('killed');
      const onShut = (): void => resolve('shutdown');
      kill.addEventListener('abort', onKill, { once: true });
      shut.addEventListener('abort', onShut, { once: true });
      p.then(resolve, reject).finally(() => {
        kill.removeEventListener('abort', onKill);
        shut.removeEventListener('abort', onShut);
      });
    });
  }

  private async runHooks(phase: string, call: (h: AnyTaskHook) => Promise<unknown> | undefined): Promise<void> {
    for (const hook of this.hooks) {
      try {
        await call(hook);
      } catch (err) {
        this.cfg.logger.warn({ task: this.taskName, hook: hook.name, phase, err: errorMessage(err) }, 'task hook failed');
      }
    }
  }

  private hookRequest(): TaskHookRequest {
    return {
      alloc: this.alloc,
      group: this.group,
      task: this.task,
      allocDir: this.cfg.allocDir,
      node: this.cfg.node,
      driver: this.cfg.driver,
      signal: this.stopSignal(),
      lifecycle: this.lifecycle,
      ...(this.variables ? { variables: this.variables } : {}),
      ...(this.cfg.identities ? { identities: this.cfg.identities } : {}),
    };
  }

  private resources(): TaskConfig['resources'] {
    const tr = this.alloc.AllocatedResources?.Tasks?.[this.taskName];
    return {
      cpuShares: tr?.Cpu.CpuShares ?? this.task.Resources?.CPU ?? 100,
      memoryMB: tr?.Memory.MemoryMB ?? this.task.Resources?.MemoryMB ?? 300,
      memoryMaxMB: tr?.Memory.MemoryMaxMB ?? this.task.Resources?.MemoryMaxMB ?? 0,
      cores: tr?.Cpu.ReservedCores?.length ?? this.task.Resources?.Cores ?? 0,
    };
  }

  private setHandle(h: TaskHandle | null): void {
    this.handle = h;
    this.cfg.store.putTaskHandle(this.alloc.ID, this.taskName, h);
  }

  /**
   * Drops the driver handle (persisted) and destroys the task. Callers persist the Terminated
   * event first, so a crash after this write leaves "running, no handle, last event
   * Terminated", which restore() recognises as exited rather than starting the task again.
   */
  private async clearHandle(): Promise<void> {
    const h = this.handle;
    if (!h) return;
    this.setHandle(null);
    this.exitPromise = null;
    await this.cfg.driver.destroyTask(h.taskId, false).catch(() => undefined);
  }

  /**
   * Moves to `state` with an optional event; timestamps as Nomad sets them. With `handle`, the
   * driver handle is persisted in the same write as the state.
   */
  private setState(state: TaskState['State'], ev?: TaskEvent, handle?: TaskHandle): void {
    const prev = this.taskState.State;
    if (ev) {
      appendTaskEvent(this.taskState, ev);
      logTaskEvent(this.log, ev);
    }
    this.taskState.State = state;
    const nowIso = new Date(this.now()).toISOString();
    if (state === 'running' && prev !== 'running') this.taskState.StartedAt = nowIso;
    if (state === 'dead' && !this.taskState.FinishedAt) this.taskState.FinishedAt = nowIso;
    this.persistState(handle);
  }

  private persistState(handle?: TaskHandle): void {
    if (handle) this.cfg.store.putTaskHandleAndState(this.alloc.ID, this.taskName, handle, this.taskState);
    else this.cfg.store.putTaskState(this.alloc.ID, this.taskName, this.taskState);
    this.cfg.onStateChange(this.taskName, this.state());
  }

  private now(): number {
    return this.cfg.clock.now();
  }
}
