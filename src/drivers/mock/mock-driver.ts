/**
 * Nomad's mock driver, in process and driven by a Clock: a task "runs" for `run_for`, prints
 * `stdout_string` (`stdout_repeat` more times, every `stdout_repeat_duration`) into the
 * task's rotated log files, then exits with `exit_code`/`exit_signal`/`exit_err_msg`.
 * Stopping waits `kill_after` (or the natural exit), as Nomad's does; the stop timeout and
 * signal are ignored. Tasks live in the agent, so they cannot be recovered after a restart.
 *
 * It isolates nothing: an exec runs its command on the host as the agent's user. So, as Nomad
 * builds it only into test and dev binaries, an agent has it only in -dev mode or when its
 * config says `plugin "mock_driver" { config { enabled = true } }` (builtinDrivers).
 */
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
import { RotatingFileWriter, megabytes } from '../logs/rotating-file-writer.js';
import { parseMockConfig, type MockTaskConfig } from './mock-config.js';

/** The driver's name, as Nomad's (`driver = "mock_driver"`). */
export const MOCK_DRIVER_NAME = 'mock_driver';

/** Raised by signalTask when the task's config sets `signal_error`. */
export class MockSignalError extends Error {
  readonly code = 'MOCK_SIGNAL_ERROR';
  constructor(message: string) {
    super(message);
    this.name = 'MockSignalError';
  }
}

interface MockTask {
  config: TaskConfig;
  cfg: MockTaskConfig;
  status: TaskStatus;
  timers: Timer[];
  writers: RotatingFileWriter[];
  exited: Promise<ExitResult>;
  finish: () => void;
  signals: string[];
}

/** Options of the mock driver. */
export interface MockDriverOptions {
  clock?: Clock;
}

/** The mock driver; see the file comment. */
export class MockDriver implements Driver {
  readonly name = MOCK_DRIVER_NAME;
  private readonly clock: Clock;
  private readonly tasks = new Map<string, MockTask>();
  private pid = 100_000;

  constructor(opts: MockDriverOptions = {}) {
    this.clock = opts.clock ?? systemClock;
  }

  /** Nothing is isolated: an exec runs its command on the host as the agent's user, as Nomad's mock driver. */
  capabilities(): DriverCapabilities {
    return { fsIsolation: FsIsolation.None };
  }

  async fingerprint(): Promise<DriverFingerprint> {
    return { detected: true, healthy: true, healthDescription: 'Healthy', attributes: { 'driver.mock_driver': '1', 'driver.mock': 'true' } };
  }

  async startTask(config: TaskConfig): Promise<TaskHandle> {
    const cfg = parseMockConfig(config.driverConfig ?? {});
    if (cfg.startBlockForMs > 0) await this.clock.sleep(cfg.startBlockForMs);
    if (cfg.startError) throw new DriverError(DriverErrorCode.StartFailed, cfg.startError, cfg.startErrorRecoverable);
    const prev = this.tasks.get(config.id);
    if (prev && prev.status.state === TaskRunState.Running) {
      throw new DriverError(DriverErrorCode.StartFailed, `mock_driver: task "${config.id}" is already running`, false);
    }
    const startedAt = this.clock.now();
    const pid = ++this.pid;
    let resolveExit!: (r: ExitResult) => void;
    const exited = new Promise<ExitResult>((r) => (resolveExit = r));
    const task: MockTask = {
      config,
      cfg,
      status: { id: config.id, state: TaskRunState.Running, startedAt, completedAt: null, exitResult: null, pid },
      timers: [],
      writers: [],
      exited,
      signals: [],
      finish: () => {
        if (task.status.state !== TaskRunState.Running) return;
        for (const t of task.timers) t.cancel();
        for (const w of task.writers) w.close();
        const r: ExitResult = { exitCode: cfg.exitCode, signal: cfg.exitSignal, oomKilled: false };
        if (cfg.exitErrMsg) r.err = cfg.exitErrMsg;
        task.status = { ...task.status, state: TaskRunState.Exited, completedAt: this.clock.now(), exitResult: r };
        resolveExit(r);
      },
    };
    this.tasks.set(config.id, task);
    this.emit(task, 'stdout', cfg.stdoutString, cfg.stdoutRepeat, cfg.stdoutRepeatMs);
    this.emit(task, 'stderr', cfg.stderrString, cfg.stderrRepeat, cfg.stderrRepeatMs);
    task.timers.push(this.clock.setTimer(cfg.runForMs, () => task.finish()));
    return { taskId: config.id, driver: this.name, config, startedAt, pid, state: { runForMs: cfg.runForMs } };
  }

  /** Writes `text` now and `repeat` more times, every `everyMs`, while the task runs. */
  private emit(task: MockTask, stream: 'stdout' | 'stderr', text: string, repeat: number, everyMs: number): void {
    if (!text) return;
    const { logs, taskName } = task.config;
    const writer = new RotatingFileWriter({
      dir: logs.dir,
      prefix: `${taskName}.${stream}`,
      maxFiles: logs.maxFiles,
      maxFileSizeBytes: megabytes(logs.maxFileSizeMB),
    });
    task.writers.push(writer);
    writer.write(text);
    let left = repeat;
    const again = () => {
      if (left <= 0 || task.status.state !== TaskRunState.Running) return;
      task.timers.push(
        this.clock.setTimer(everyMs, () => {
          if (task.status.state !== TaskRunState.Running) return;
          writer.write(text);
          left--;
          again();
        }),
      );
    };
    again();
  }

  async recoverTask(handle: TaskHandle): Promise<void> {
    if (this.tasks.has(handle.taskId)) return;
    throw new DriverError(DriverErrorCode.TaskNotFound, `mock_driver: task "${handle.taskId}" lived in the previous agent and cannot be recovered`, true);
  }

  waitTask(taskId: string): Promise<ExitResult> {
    return this.mustGet(taskId).exited;
  }

  async stopTask(taskId: string, _timeoutMs: number, _signal: string): Promise<void> {
    const task = this.mustGet(taskId);
    if (task.status.state !== TaskRunState.Running) return;
    const timer = this.clock.setTimer(task.cfg.killAfterMs, () => task.finish());
    task.timers.push(timer);
    await task.exited;
  }

  async destroyTask(taskId: string, force: boolean): Promise<void> {
    const task = this.tasks.get(taskId);
    if (!task) return;
    if (task.status.state === TaskRunState.Running) {
      if (!force) throw new DriverError(DriverErrorCode.StartFailed, `mock_driver: cannot destroy running task "${taskId}"`, false);
      task.finish();
    }
    this.tasks.delete(taskId);
  }

  inspectTask(taskId: string): TaskStatus {
    return { ...this.mustGet(taskId).status };
  }

  async signalTask(taskId: string, signal: string): Promise<void> {
    const task = this.mustGet(taskId);
    task.signals.push(signal);
    if (task.cfg.signalError) throw new MockSignalError(task.cfg.signalError);
  }

  /** Signals a task has received, oldest first (for tests). */
  signalsReceived(taskId: string): string[] {
    return [...this.mustGet(taskId).signals];
  }

  execSpec(taskId: string, command: string[]): ExecSpec {
    const { config } = this.mustGet(taskId);
    const [file, ...args] = command.length > 0 ? command : ['/bin/sh'];
    return { file: file!, args, cwd: config.dirs.dir, env: { ...config.env } };
  }

  async taskStats(taskId: string): Promise<TaskResourceUsage> {
    const task = this.mustGet(taskId);
    return { timestamp: this.clock.now() * 1_000_000, memoryRssBytes: 0, cpuTotalTicks: 0, cpuPercent: 0, pids: [task.status.pid] };
  }

  async shutdown(): Promise<void> {
    // Mock tasks live in this process and end with it (they cannot be recovered): their state is
    // left "running", as an agent shutdown leaves tasks, but their timers (a `run_for` of an
    // hour) must not keep a stopping agent's process alive.
    for (const task of this.tasks.values()) {
      for (const t of task.timers) t.cancel();
      for (const w of task.writers) w.close();
    }
  }

  private mustGet(taskId: string): MockTask {
    const t = this.tasks.get(taskId);
    if (!t) throw new DriverError(DriverErrorCode.TaskNotFound, `mock_driver: task "${taskId}" not found`, false);
    return t;
  }
}

/** Creates the mock driver. */
export function createMockDriver(opts: MockDriverOptions = {}): MockDriver {
  return new MockDriver(opts);
}
