/**
 * The driver contract: the narrow interface between a task runner and whatever runs the
 * task (a host process, an isolated process, a scripted mock). Every driver passes the same
 * conformance suite (test/drivers/conformance.ts).
 *
 * Lifecycle of one task, as the task runner drives it:
 *
 *   startTask ──► waitTask ──(exit)──► destroyTask
 *       │             ▲
 *       │   agent restart: recoverTask(handle) then waitTask again
 *       └─► stopTask(timeout, signal): signal, wait up to timeout, then SIGKILL
 */

/** What a driver reports about itself during fingerprinting. */
export interface DriverFingerprint {
  detected: boolean;
  healthy: boolean;
  healthDescription: string;
  /** Node attributes contributed by the driver, e.g. `driver.raw_exec: "1"`. */
  attributes: Record<string, string>;
}

/**
 * How a driver confines a task's view of the filesystem, as Nomad's drivers.FSIsolation:
 * `none` — the task sees the host's filesystem as the agent's user does (raw_exec, the mock
 * driver); `chroot` — a sandbox built from the task's directories and chosen host paths
 * (exec); `image` — a container image's root filesystem (docker).
 */
export const FsIsolation = { None: 'none', Chroot: 'chroot', Image: 'image' } as const;
export type FsIsolation = (typeof FsIsolation)[keyof typeof FsIsolation];

/**
 * What a driver declares about the isolation of its tasks (Nomad's drivers.Capabilities).
 * Policy follows from it, never from the driver's name: an exec into a task without
 * filesystem isolation is a shell on the host, and needs `alloc-node-exec`.
 */
export interface DriverCapabilities {
  fsIsolation: FsIsolation;
}

/** Where a task's stdout and stderr go: `<dir>/<task>.stdout.N`, rotated. */
export interface TaskLogConfig {
  dir: string;
  maxFiles: number;
  maxFileSizeMB: number;
}

/** The task's directories inside its allocation directory. */
export interface TaskDirs {
  /** The task's working directory: `<allocdir>/<task>`. */
  dir: string;
  localDir: string;
  secretsDir: string;
  tmpDir: string;
  /** The allocation's shared directory: `<allocdir>/alloc`. */
  sharedAllocDir: string;
  logDir: string;
}

/**
 * A host path bound into the task (Nomad's drivers.MountConfig), resolved by the client from a
 * `volume_mount` and the host volume it names: the host path is one the client's configuration
 * offers, never one the job chose.
 */
export interface TaskMount {
  /** The host volume's resolved path. */
  hostPath: string;
  /** Where it appears in the task: absolute, normalized, without "..". */
  taskPath: string;
  readOnly: boolean;
  /** "private", "host-to-task" or "bidirectional" (Nomad's propagation modes). */
  propagationMode: string;
}

/** Everything a driver needs to start a task. Config and env are already interpolated. */
export interface TaskConfig {
  /** Unique per task instance: `<allocId>/<taskName>`. */
  id: string;
  allocId: string;
  taskName: string;
  jobName: string;
  groupName: string;
  driverConfig: Record<string, unknown>;
  env: Record<string, string>;
  user: string;
  dirs: TaskDirs;
  /** `cores`: how many whole cores the task reserved (0: none), for drivers that enforce CPU quota. */
  resources: { cpuShares: number; memoryMB: number; memoryMaxMB: number; cores?: number };
  logs: TaskLogConfig;
  /** The group's `network { mode }` ("host" when unset), for drivers that isolate the network. */
  networkMode?: string;
  /** Host volumes to bind into the task; only drivers with filesystem isolation are given any. */
  mounts?: TaskMount[];
  /**
   * The allocation's network namespace (modes bridge, none, cni/*), created by the client before
   * the first task starts: the task joins it instead of making one (Nomad's NetworkIsolationSpec).
   */
  networkIsolation?: NetworkIsolation;
}

/** A group network namespace a task joins, with the name files its network asks for. */
export interface NetworkIsolation {
  /** The namespace's path, e.g. /var/run/netns/<alloc id>. */
  path: string;
  /** The allocation's address inside it ('' in mode none). */
  address: string;
  /** resolv.conf from the group's `dns` block, to mount at /etc/resolv.conf (absent without one). */
  resolvConf?: string;
  /** hosts file naming `hostname`, to mount at /etc/hosts. */
  hostsFile?: string;
  hostname?: string;
  /**
   * The container that owns the namespace (docker's pause container, Nomad's
   * docker_sandbox_container_id), when a driver created it: the driver's tasks join it by it.
   */
  sandboxId?: string;
}

/**
 * A sandbox that owns an allocation's network namespace, as a driver made it (Nomad's
 * DriverNetworkManager): the client names the namespace after the allocation by `pid`'s and sets
 * it up with CNI like one it made itself.
 */
export interface DriverSandbox {
  /** The sandbox's ID (docker: the pause container's), given to tasks as NetworkIsolation.sandboxId. */
  id: string;
  /** A process inside the sandbox's network namespace. */
  pid: number;
}

/**
 * Drivers whose tasks can only join a namespace another of their containers owns (docker:
 * `network_mode = "container:<id>"`) create the group namespace themselves (Nomad's
 * MustInitiateNetwork).
 */
export interface DriverNetworkManager {
  /** Creates (or finds again, running) the allocation's sandbox. Throws DriverError. */
  createNetwork(allocId: string, req: { hostname?: string }): Promise<DriverSandbox>;
  /** Whether the sandbox still runs, tracking it again (after an agent restart). */
  sandboxRunning(allocId: string, sandboxId: string): Promise<boolean>;
  /** Removes the sandbox (by ID, else found by the allocation); a missing one is fine. */
  destroyNetwork(allocId: string, sandboxId?: string): Promise<void>;
}

/**
 * What the client persists to reattach to a running task after an agent restart. `state` is
 * the driver's own JSON-serializable data (a pid, a start time, …).
 */
export interface TaskHandle {
  taskId: string;
  driver: string;
  config: TaskConfig;
  /** Unix ms. */
  startedAt: number;
  pid: number;
  state: Record<string, unknown>;
}

/** How a task ended. */
export interface ExitResult {
  exitCode: number;
  /** Signal number that killed the task, 0 if none. */
  signal: number;
  oomKilled: boolean;
  /** Set when the driver itself failed while waiting. */
  err?: string;
}

/** Whether the task succeeded: exit code 0, no signal, no OOM, no error. */
export function exitSuccessful(r: ExitResult): boolean {
  return r.exitCode === 0 && r.signal === 0 && !r.oomKilled && !r.err;
}

export const TaskRunState = { Unknown: 'unknown', Running: 'running', Exited: 'exited' } as const;
export type TaskRunState = (typeof TaskRunState)[keyof typeof TaskRunState];

export interface TaskStatus {
  id: string;
  state: TaskRunState;
  startedAt: number;
  completedAt: number | null;
  exitResult: ExitResult | null;
  pid: number;
}

/** Resource usage of a task, as /v1/client/allocation/:id/stats reports it. */
export interface TaskResourceUsage {
  /** Unix nanoseconds. */
  timestamp: number;
  memoryRssBytes: number;
  cpuTotalTicks: number;
  cpuPercent: number;
  pids: number[];
}

/** A terminal's size in character cells. */
export interface TerminalSize {
  width: number;
  height: number;
}

/** Callbacks of a running exec command. `onExit` fires once, after all output was delivered. */
export interface ExecStreamEvents {
  onOutput(stream: 'stdout' | 'stderr', data: Buffer): void;
  onExit(exitCode: number): void;
}

/** A running exec command the session can feed and resize. Methods are no-ops once it exited. */
export interface ExecStream {
  write(data: Buffer): void;
  closeStdin(): void;
  resize(size: TerminalSize): void;
  /** Kills the command (the client went away). */
  kill(): void;
}

/**
 * The descriptor on which a relayed terminal command (ExecSpec.relayedTerminal) says its own
 * terminal is up. The relay (script(1)) copies the session's terminal settings for its own and
 * then makes the session's raw: input that came before would be echoed and edited by both
 * terminals, and an early ^D would end the relay's input instead of reaching the command.
 */
export const RELAY_READY_FD = 3;

/** A command to run inside a task's environment (alloc exec). */
export interface ExecSpec {
  file: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
  /**
   * The signal that ends the command when the session ends (default SIGKILL); a helper that
   * must pass the end on to what it started asks for one it can catch.
   */
  killSignal?: NodeJS.Signals;
  /**
   * The user the command runs as when it is not this process's: its stdio pipes are made its
   * own (as runc's fixStdioPermissions does), else a pipe is root's, mode 0600, and the
   * command cannot reopen /dev/stdin or /proc/self/fd/N.
   */
  stdioOwner?: { uid: number; gid: number };
  /**
   * What runs instead when the session has a terminal, for a driver whose commands get a
   * terminal of their own, relayed over the session's (the exec sandbox: see sandbox-command.ts).
   * It gets a pipe as fd RELAY_READY_FD and writes a byte to it once its terminal is up; input
   * is held until then (see RELAY_READY_FD).
   */
  relayedTerminal?: Pick<ExecSpec, 'file' | 'args' | 'env'>;
  /**
   * Set by drivers whose tasks live where a host process cannot go (a container): starts the
   * command there instead of spawning `file` on the host.
   */
  start?: (tty: boolean, events: ExecStreamEvents) => ExecStream;
}

/** What a driver may report while starting a task (e.g. image download progress). */
export interface StartTaskEvents {
  /** A message shown as a "Driver" task event. */
  emit(message: string): void;
}

/** Error codes drivers throw, matched by code rather than message text. */
export const DriverErrorCode = {
  StartFailed: 'DRIVER_START_FAILED',
  TaskNotFound: 'DRIVER_TASK_NOT_FOUND',
  BadConfig: 'DRIVER_BAD_CONFIG',
  RecoverFailed: 'DRIVER_RECOVER_FAILED',
  Unsupported: 'DRIVER_UNSUPPORTED',
} as const;
export type DriverErrorCode = (typeof DriverErrorCode)[keyof typeof DriverErrorCode];

/** A driver failure. `recoverable` tells the task runner whether a restart may help. */
export class DriverError extends Error {
  constructor(
    readonly code: DriverErrorCode,
    message: string,
    readonly recoverable: boolean,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'DriverError';
  }
}

/** The interface every driver implements. */
export interface Driver {
  readonly name: string;
  /** What the driver isolates; constant for the driver's life. */
  capabilities(): DriverCapabilities;
  fingerprint(): Promise<DriverFingerprint>;
  /** Starts the task and returns a handle to persist. Throws DriverError. */
  startTask(config: TaskConfig, events?: StartTaskEvents): Promise<TaskHandle>;
  /**
   * Reattaches to a task started before an agent restart. Throws DriverError with code
   * TaskNotFound when the task is gone and its exit cannot be learned.
   */
  recoverTask(handle: TaskHandle): Promise<void>;
  /** Resolves when the task exits (immediately if it already has). */
  waitTask(taskId: string): Promise<ExitResult>;
  /** Sends `signal` (default SIGTERM), waits up to timeoutMs, then kills the task's process group. */
  stopTask(taskId: string, timeoutMs: number, signal: string): Promise<void>;
  /** Forgets the task and frees what the driver holds for it; kills it first if force. */
  destroyTask(taskId: string, force: boolean): Promise<void>;
  inspectTask(taskId: string): TaskStatus;
  signalTask(taskId: string, signal: string): Promise<void>;
  /** How to run a command in the task's environment, for alloc exec. */
  execSpec(taskId: string, command: string[]): ExecSpec;
  taskStats(taskId: string): Promise<TaskResourceUsage>;
  /**
   * Called when the agent shuts down: release resources, leave tasks running. With
   * `stopHelpers` (a -dev agent, after it destroyed every task) also stop the helper processes
   * the driver started, so nothing outlives the agent.
   */
  shutdown(opts?: { stopHelpers?: boolean }): Promise<void>;
  /** Present on drivers that must create the group namespace themselves (docker). */
  readonly network?: DriverNetworkManager;
}
