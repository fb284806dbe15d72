/**
 * The raw_exec driver: runs a task as a plain host process, as the agent's user, in the task
 * directory. Tasks are children of the per-data-dir supervisor daemon, never of the agent, so
 * they survive the agent; a restarted agent reattaches through recoverTask.
 *
 *   startTask ─► supervisor `start` ─► handle {pid, state.startTime}
 *   recoverTask ─► supervisor `status`: running → reattach; exited → real exit code;
 *                  unknown but pid+startTime alive → degraded (poll /proc, exit code unknown)
 */
import { platform } from 'node:os';
import { resolve } from 'node:path';
import { systemClock, type Clock, type Timer } from '../../time/clock.js';
import {
  DriverError,
  DriverErrorCode,
  FsIsolation,
  TaskRunState,
  type Driver,
  type DriverCapabilities,
  type DriverFingerprint,
  type ExecSpec,
  type ExitResult,
  type TaskConfig,
  type TaskHandle,
  type TaskResourceUsage,
  type TaskStatus,
} from '../driver.js';
import { isLiveGroupLeader, processGroupUsage } from '../proc/proc-stat.js';
import { SupervisorClient } from '../supervisor/supervisor-client.js';
import {
  SupervisorError,
  SupervisorErrorCode,
  type SupervisedExit,
  type SupervisedTaskStatus,
  type SupervisorExitEvent,
} from '../supervisor/protocol.js';
import { signalNumber } from '../supervisor/signals.js';
import { buildTaskEnv, DEFAULT_ENV_DENYLIST, parseRawExecConfig, resolveCommand } from './raw-exec-config.js';
import { joinNetnsArgv, nsenterPath } from '../net-join.js';

/** The driver's name, as in jobspecs. */
export const RAW_EXEC_DRIVER_NAME = 'raw_exec';

/** Options of the raw_exec driver. */
export interface RawExecDriverOptions {
  /** The client's data dir; the supervisor lives in `<dataDir>/supervisor/`. */
  dataDir: string;
  logger?: { warn(msg: string): void; debug?(msg: string): void };
  clock?: Clock;
  /** Idle timeout of a supervisor this driver starts (default 60 s). */
  supervisorIdleMs?: number;
  /** Inherit the agent's environment under the task env, as Nomad does (default true). */
  inheritHostEnv?: boolean;
  envDenylist?: string[];
  /** How often a degraded task (no supervisor) is polled for liveness. */
  degradedPollMs?: number;
  /**
   * Whether raw_exec runs tasks (default true for a driver built directly). An agent's drivers
   * (builtinDrivers) pass false unless `plugin "raw_exec" { config { enabled = true } }` or -dev
   * enables it, as Nomad: raw_exec runs anything as the agent's user. Drivers built on raw_exec
   * (exec) isolate their tasks and ignore it.
   */
  enabled?: boolean;
}

/** What raw_exec keeps in TaskHandle.state to reattach. */
interface RawExecState {
  startTime: number;
}

/** What the supervisor is to spawn for a task (see RawExecDriver.prepareStart). */
export interface PreparedStart {
  file: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
  signalProcs?: string[];
  state: Record<string, unknown>;
  cleanup: () => void | Promise<void>;
}

/** One tracked task run (shared with drivers built on raw_exec, such as exec). */
export interface RawTask {
  handle: TaskHandle;
  status: TaskStatus;
  startTime: number;
  exited: Promise<ExitResult>;
  settle: (r: ExitResult) => void;
  /** No supervisor knows this process: we can only poll /proc. */
  degraded: boolean;
  pollTimer: Timer | null;
  lastCpu: { ticks: number; at: number } | null;
}

const CLOCK_TICKS_PER_SECOND = 100;

function toExitResult(e: SupervisedExit): ExitResult {
  return { exitCode: e.exitCode, signal: e.signal, oomKilled: false };
}

function driverErrorFrom(err: unknown, what: string): DriverError {
  if (err instanceof DriverError) return err;
  if (err instanceof SupervisorError) {
    switch (err.code) {
      case SupervisorErrorCode.TaskNotFound:
        return new DriverError(DriverErrorCode.TaskNotFound, `${what}: ${err.message}`, false, { cause: err });
      case SupervisorErrorCode.BadRequest:
        return new DriverError(DriverErrorCode.BadConfig, `${what}: ${err.message}`, false, { cause: err });
      case SupervisorErrorCode.SpawnFailed:
        return new DriverError(DriverErrorCode.StartFailed, `${what}: ${err.message}`, false, { cause: err });
      case SupervisorErrorCode.TaskExists:
      case SupervisorErrorCode.SignalFailed:
      case SupervisorErrorCode.Unavailable:
        return new DriverError(DriverErrorCode.StartFailed, `${what}: ${err.message}`, true, { cause: err });
    }
  }
  return new DriverError(DriverErrorCode.StartFailed, `${what}: ${err instanceof Error ? err.message : String(err)}`, true, { cause: err });
}

/** The raw_exec driver. One instance per agent; see the file comment for the design. */
export class RawExecDriver implements Driver {
  readonly name: string = RAW_EXEC_DRIVER_NAME;
  protected readonly client: SupervisorClient;
  protected readonly clock: Clock;
  protected readonly tasks = new Map<string, RawTask>();
  private shutDown = false;
  private resyncing: Promise<void> | null = null;
  /** Task ids with a start or recover request in flight, counted (a restart may overlap a recover). */
  private readonly attaching = new Map<string, number>();
  /**
   * Exit events that arrived before their task was tracked. The supervisor's reply to `start`
   * and the task's exit can come in one socket read; the reply only resolves a promise, so the
   * exit is handled first and would otherwise be dropped, leaving the task "running" forever.
   */
  private readonly earlyExits = new Map<string, SupervisorExitEvent>();

  constructor(protected readonly opts: RawExecDriverOptions) {
    this.clock = opts.clock ?? systemClock;
    this.client = new SupervisorClient({ dataDir: opts.dataDir, idleMs: opts.supervisorIdleMs });
    this.client.onExit = (ev) => this.onExitEvent(ev);
    this.client.onDisconnect = () => {
      if (!this.shutDown) this.clock.setTimer(200, () => void this.resync());
    };
  }

  /** A raw_exec task is a host process: it sees the host's filesystem (a subclass that isolates says so). */
  capabilities(): DriverCapabilities {
    return { fsIsolation: FsIsolation.None };
  }

  async fingerprint(): Promise<DriverFingerprint> {
    // Undetected when disabled, as Nomad's: jobs needing it stay unplaced with "missing drivers".
    if (this.opts.enabled === false) return { detected: false, healthy: false, healthDescription: 'disabled', attributes: {} };
    const linux = platform() === 'linux';
    return {
      detected: linux,
      healthy: linux,
      healthDescription: linux ? 'Healthy' : 'raw_exec needs Linux (/proc, process groups)',
      attributes: linux ? { 'driver.raw_exec': '1' } : {},
    };
  }

  /** Refuses to start a task while disabled (a placement made from a stale fingerprint). */
  protected checkEnabled(): void {
    if (this.opts.enabled === false) {
      throw new DriverError(DriverErrorCode.StartFailed, 'raw_exec is disabled on this client (plugin "raw_exec" { config { enabled = true } } enables it)', false);
    }
  }

  /**
   * What the supervisor spawns for `config`, and the driver state to persist with the handle.
   * Drivers built on raw_exec (exec) wrap the command; `cleanup` undoes what this prepared when
   * the start fails.
   */
  protected async prepareStart(config: TaskConfig): Promise<PreparedStart> {
    const cfg = parseRawExecConfig(config.driverConfig ?? {});
    const env = buildTaskEnv(
      config.env ?? {},
      this.opts.inheritHostEnv === false ? null : process.env,
      this.opts.envDenylist ?? DEFAULT_ENV_DENYLIST,
    );
    const file = resolveCommand(cfg.command, config.dirs.dir, env['PATH']);
    if (config.networkIsolation) {
      // A group network (bridge, none, cni/*): the task runs in the allocation's namespace, as Nomad's raw_exec.
      const [ns, ...nsArgs] = joinNetnsArgv(nsenterPath(), config.networkIsolation.path);
      return { file: ns!, args: [...nsArgs, resolve(file), ...cfg.args], cwd: resolve(config.dirs.dir), env, state: {}, cleanup: () => {} };
    }
    // Absolute: the supervisor does not share the agent's working directory.
    return { file: resolve(file), args: cfg.args, cwd: resolve(config.dirs.dir), env, state: {}, cleanup: () => {} };
  }

  async startTask(config: TaskConfig): Promise<TaskHandle> {
    const existing = this.tasks.get(config.id);
    if (existing && existing.status.state === TaskRunState.Running) {
      throw new DriverError(DriverErrorCode.StartFailed, `${this.name}: task "${config.id}" is already running`, false);
    }
    this.checkEnabled();
    const prep = await this.prepareStart(config);
    let st: SupervisedTaskStatus;
    this.beginAttach(config.id);
    try {
      st = await this.client.request('start', {
        spec: {
          taskId: config.id,
          file: prep.file,
          args: prep.args,
          cwd: prep.cwd,
          env: prep.env,
          taskName: config.taskName,
          logDir: resolve(config.logs.dir),
          maxFiles: config.logs.maxFiles,
          maxFileSizeMB: config.logs.maxFileSizeMB,
          ...(prep.signalProcs ? { signalProcs: prep.signalProcs } : {}),
        },
      });
    } catch (err) {
      this.endAttach(config.id);
      await prep.cleanup();
      throw driverErrorFrom(err, `${this.name}: starting task "${config.id}"`);
    }
    const handle: TaskHandle = {
      taskId: config.id,
      driver: this.name,
      config,
      startedAt: st.startedAt,
      pid: st.pid,
      state: { ...prep.state, startTime: st.startTime },
    };
    this.track(handle, st.startTime, st.exit, false);
    this.endAttach(config.id);
    return handle;
  }

  async recoverTask(handle: TaskHandle): Promise<void> {
    if (this.tasks.has(handle.taskId)) return;
    this.beginAttach(handle.taskId);
    try {
      await this.recoverAttaching(handle);
    } finally {
      this.endAttach(handle.taskId);
    }
  }

  private async recoverAttaching(handle: TaskHandle): Promise<void> {
    const startTime = Number((handle.state as Partial<RawExecState>)?.startTime ?? 0);
    let st: SupervisedTaskStatus | null = null;
    try {
      st = await this.client.request('status', { taskId: handle.taskId });
    } catch (err) {
      this.opts.logger?.warn(`${this.name}: supervisor unavailable while recovering "${handle.taskId}": ${(err as Error).message}`);
    }
    if (st && st.state !== 'unknown' && st.pid === handle.pid) {
      this.track(handle, startTime, st.exit, false);
      return;
    }
    // Without a supervisor only the pid and start time vouch for the process: a start time of 0
    // (never learned) or a process not leading its own group cannot be told from a PID-reused
    // stranger, and attaching to one would later signal it.
    if (isLiveGroupLeader(handle.pid, startTime)) {
      // Its supervisor is gone: the process lives on but its exit code is lost to us.
      this.opts.logger?.warn(`${this.name}: task "${handle.taskId}" (pid ${handle.pid}) has no supervisor; reattaching degraded`);
      this.track(handle, startTime, null, true);
      return;
    }
    throw new DriverError(
      DriverErrorCode.TaskNotFound,
      `${this.name}: task "${handle.taskId}" (pid ${handle.pid}) is gone and its exit was not recorded`,
      true,
    );
  }

  waitTask(taskId: string): Promise<ExitResult> {
    return this.mustGet(taskId).exited;
  }

  async stopTask(taskId: string, timeoutMs: number, signal: string): Promise<void> {
    const t = this.mustGet(taskId);
    if (t.status.state !== TaskRunState.Running) return;
    if (t.degraded) {
      this.killGroup(t, signal || 'SIGTERM');
      const timer = this.clock.setTimer(timeoutMs, () => {
        // A throw here would be uncaught and take the agent down.
        try {
          this.killGroup(t, 'SIGKILL');
        } catch (err) {
          this.opts.logger?.warn(`${this.name}: SIGKILL to degraded task "${taskId}": ${(err as Error).message}`);
        }
      });
      await t.exited;
      timer.cancel();
      return;
    }
    try {
      const st = await this.client.request('stop', { taskId, timeoutMs, signal: signal || 'SIGTERM' });
      if (st.exit) t.settle(this.exitResult(t.handle, st.exit));
    } catch (err) {
      throw driverErrorFrom(err, `${this.name}: stopping task "${taskId}"`);
    }
  }

  async destroyTask(taskId: string, force: boolean): Promise<void> {
    const t = this.tasks.get(taskId);
    if (!t) return;
    if (t.status.state === TaskRunState.Running) {
      if (!force) throw new DriverError(DriverErrorCode.StartFailed, `${this.name}: cannot destroy running task "${taskId}"`, false);
      await this.stopTask(taskId, 0, 'SIGKILL');
    }
    t.pollTimer?.cancel();
    this.tasks.delete(taskId);
    if (!t.degraded) {
      try {
        await this.client.request('forget', { taskId, force: true });
      } catch (err) {
        this.opts.logger?.warn(`${this.name}: forget "${taskId}": ${(err as Error).message}`);
      }
    }
  }

  inspectTask(taskId: string): TaskStatus {
    return { ...this.mustGet(taskId).status };
  }

  async signalTask(taskId: string, signal: string): Promise<void> {
    const t = this.mustGet(taskId);
    if (t.degraded) {
      this.killGroup(t, signal);
      return;
    }
    try {
      await this.client.request('signal', { taskId, signal });
    } catch (err) {
      throw driverErrorFrom(err, `${this.name}: signalling task "${taskId}"`);
    }
  }

  execSpec(taskId: string, command: string[]): ExecSpec {
    const t = this.mustGet(taskId);
    const cfg = t.handle.config;
    const env = buildTaskEnv(cfg.env ?? {}, this.opts.inheritHostEnv === false ? null : process.env, this.opts.envDenylist);
    const [file, ...args] = command.length > 0 ? command : ['/bin/sh'];
    if (cfg.networkIsolation) {
      // An exec into the task sees the task's network.
      const [ns, ...nsArgs] = joinNetnsArgv(nsenterPath(), cfg.networkIsolation.path);
      return { file: ns!, args: [...nsArgs, file!, ...args], cwd: cfg.dirs.dir, env };
    }
    return { file: file!, args, cwd: cfg.dirs.dir, env };
  }

  async taskStats(taskId: string): Promise<TaskResourceUsage> {
    const t = this.mustGet(taskId);
    let usage = { rssBytes: 0, cpuTicks: 0, pids: [] as number[] };
    if (t.status.state === TaskRunState.Running) {
      try {
        usage = t.degraded ? processGroupUsage(t.handle.pid) : await this.client.request('stats', { taskId });
      } catch {
        usage = processGroupUsage(t.handle.pid);
      }
    }
    const now = this.clock.now();
    let cpuPercent = 0;
    if (t.lastCpu && now > t.lastCpu.at) {
      const secs = (usage.cpuTicks - t.lastCpu.ticks) / CLOCK_TICKS_PER_SECOND;
      cpuPercent = Math.max(0, (secs / ((now - t.lastCpu.at) / 1000)) * 100);
    }
    t.lastCpu = { ticks: usage.cpuTicks, at: now };
    return { timestamp: now * 1_000_000, memoryRssBytes: usage.rssBytes, cpuTotalTicks: usage.cpuTicks, cpuPercent, pids: usage.pids };
  }

  async shutdown(opts: { stopHelpers?: boolean } = {}): Promise<void> {
    this.shutDown = true;
    for (const t of this.tasks.values()) t.pollTimer?.cancel();
    if (opts.stopHelpers) await this.client.stopDaemon();
    else this.client.close();
  }

  /** How a supervised exit reads as the task's result; exec adds what its cgroup knows (OOM). */
  protected exitResult(_handle: TaskHandle, e: SupervisedExit): ExitResult {
    return toExitResult(e);
  }

  protected mustGet(taskId: string): RawTask {
    const t = this.tasks.get(taskId);
    if (!t) throw new DriverError(DriverErrorCode.TaskNotFound, `${this.name}: task "${taskId}" not found`, false);
    return t;
  }

  /** Routes a supervisor exit event to its tracked run, or buffers it while that run is being attached. */
  private onExitEvent(ev: SupervisorExitEvent): void {
    const t = this.tasks.get(ev.taskId);
    // A pid tells this run from an earlier run of the same id that is still in the map.
    if (t && t.status.state === TaskRunState.Running && (ev.pid === undefined || ev.pid === t.handle.pid)) {
      t.settle(this.exitResult(t.handle, ev.exit));
      return;
    }
    if (this.attaching.has(ev.taskId)) this.earlyExits.set(ev.taskId, ev);
  }

  /** The buffered exit of exactly this run, if one arrived before it was tracked. */
  private takeEarlyExit(handle: TaskHandle): SupervisedExit | null {
    const ev = this.earlyExits.get(handle.taskId);
    if (!ev) return null;
    // Supervisors predating the pid field: an exit no earlier than this run's start is this run's.
    const mine = ev.pid !== undefined ? ev.pid === handle.pid : ev.exit.exitedAt >= handle.startedAt;
    if (!mine) return null;
    this.earlyExits.delete(handle.taskId);
    return ev.exit;
  }

  private beginAttach(taskId: string): void {
    this.attaching.set(taskId, (this.attaching.get(taskId) ?? 0) + 1);
  }

  private endAttach(taskId: string): void {
    const n = (this.attaching.get(taskId) ?? 1) - 1;
    if (n > 0) return void this.attaching.set(taskId, n);
    // Nothing is waiting for an exit of this id any more: what was buffered is stale.
    this.attaching.delete(taskId);
    this.earlyExits.delete(taskId);
  }

  private track(handle: TaskHandle, startTime: number, exit: SupervisedExit | null, degraded: boolean): void {
    exit ??= degraded ? null : this.takeEarlyExit(handle);
    let settle!: (r: ExitResult) => void;
    const exited = new Promise<ExitResult>((resolve) => (settle = resolve));
    const t: RawTask = {
      handle,
      startTime,
      exited,
      degraded,
      pollTimer: null,
      lastCpu: null,
      status: {
        id: handle.taskId,
        state: TaskRunState.Running,
        startedAt: handle.startedAt,
        completedAt: null,
        exitResult: null,
        pid: handle.pid,
      },
      settle: (r) => {
        if (t.status.state === TaskRunState.Exited) return;
        t.status = { ...t.status, state: TaskRunState.Exited, completedAt: this.clock.now(), exitResult: r };
        t.pollTimer?.cancel();
        t.pollTimer = null;
        settle(r);
      },
    };
    this.tasks.set(handle.taskId, t);
    if (exit) t.settle(this.exitResult(handle, exit));
    else if (degraded) this.pollDegraded(t);
  }

  private pollDegraded(t: RawTask): void {
    // A resync still running when the driver shuts down lands here: polling then would keep the
    // agent's process alive after its shutdown.
    if (this.shutDown) return;
    t.pollTimer = this.clock.setTimer(this.opts.degradedPollMs ?? 1_000, () => {
      if (this.shutDown || t.status.state !== TaskRunState.Running) return;
      if (isLiveGroupLeader(t.handle.pid, t.startTime)) return this.pollDegraded(t);
      this.settleUnsupervised(t);
    });
  }

  private settleUnsupervised(t: RawTask): void {
    t.settle({ exitCode: -1, signal: 0, oomKilled: false, err: 'task exited while unsupervised; exit code unknown' });
  }

  /**
   * Signals a degraded task's process group, re-checking right before the kill that the pid
   * still is our task (same start time, leading its group): between polls it may have exited
   * and its pid been reused. A task found gone is settled instead of signalled.
   */
  private killGroup(t: RawTask, signal: string): void {
    let sig: number;
    try {
      sig = signalNumber(signal || 'SIGTERM');
    } catch (err) {
      throw driverErrorFrom(err, `${this.name}: signal to task "${t.handle.taskId}"`);
    }
    if (t.status.state !== TaskRunState.Running) return;
    if (!isLiveGroupLeader(t.handle.pid, t.startTime)) return this.settleUnsupervised(t);
    try {
      process.kill(-t.handle.pid, sig);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ESRCH') return this.settleUnsupervised(t);
      throw driverErrorFrom(err, `${this.name}: signal to task "${t.handle.taskId}"`);
    }
  }

  /** After the supervisor connection drops: reconnect (restarting it) and re-learn each running task. */
  private resync(): Promise<void> {
    if (this.resyncing || this.shutDown) return this.resyncing ?? Promise.resolve();
    this.resyncing = (async () => {
      for (const t of this.tasks.values()) {
        if (t.status.state !== TaskRunState.Running || t.degraded) continue;
        let st: SupervisedTaskStatus | null = null;
        try {
          st = await this.client.request('status', { taskId: t.handle.taskId });
        } catch {
          st = null;
        }
        if (st?.exit && st.pid === t.handle.pid) t.settle(this.exitResult(t.handle, st.exit));
        else if (st?.state === 'running' && st.pid === t.handle.pid) continue;
        else {
          t.degraded = true;
          this.pollDegraded(t);
        }
      }
    })().finally(() => {
      this.resyncing = null;
    });
    return this.resyncing;
  }
}

/** Creates the raw_exec driver for a client data dir. */
export function createRawExecDriver(opts: RawExecDriverOptions): Driver {
  return new RawExecDriver(opts);
}
