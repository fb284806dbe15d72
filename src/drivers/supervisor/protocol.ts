/**
 * The supervisor protocol: newline-delimited JSON over the unix socket
 * `<dataDir>/supervisor/supervisor.sock`. One definition shared by the supervisor daemon and
 * the driver-side client.
 *
 *   agent ──{id, op, …}──────────► supervisor
 *   agent ◄─{id, ok, result|error}─ supervisor      (one reply per request)
 *   agent ◄─{event: 'exit', …}───── supervisor      (after `subscribe`, for every task exit)
 */
import { join } from 'node:path';

/** Bumped when a message changes incompatibly. */
export const PROTOCOL_VERSION = 1;

/** What the supervisor needs to spawn one task. */
export interface SupervisedTaskSpec {
  taskId: string;
  file: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
  /** Log file prefix is `<logDir>/<taskName>.stdout` / `.stderr`. */
  taskName: string;
  logDir: string;
  maxFiles: number;
  maxFileSizeMB: number;
  /**
   * For a sandboxed task (exec driver): its cgroup's `cgroup.procs` files. Signals other than
   * SIGKILL go to the processes listed there instead of the process group — the spawned process
   * is the sandbox's outer wrapper, which a signal would kill before the task could react.
   */
  signalProcs?: string[];
}

/** How a supervised process ended. `exitCode` is 128+signal when a signal killed it (as a shell reports). */
export interface SupervisedExit {
  exitCode: number;
  signal: number;
  /** Unix ms. */
  exitedAt: number;
}

/** The supervisor's view of one task. */
export interface SupervisedTaskStatus {
  taskId: string;
  state: 'running' | 'exited' | 'unknown';
  pid: number;
  /** /proc start time in ticks; 0 if unknown. */
  startTime: number;
  /** Unix ms. */
  startedAt: number;
  exit: SupervisedExit | null;
}

/** Process-group usage of a task. */
export interface SupervisedTaskStats {
  rssBytes: number;
  cpuTicks: number;
  pids: number[];
}

/** Every request the agent can make, by `op`. */
export type SupervisorRequest =
  | { id: number; op: 'hello' }
  | { id: number; op: 'start'; spec: SupervisedTaskSpec }
  | { id: number; op: 'signal'; taskId: string; signal: string }
  | { id: number; op: 'stop'; taskId: string; timeoutMs: number; signal: string }
  | { id: number; op: 'status'; taskId: string }
  | { id: number; op: 'list' }
  | { id: number; op: 'stats'; taskId: string }
  | { id: number; op: 'forget'; taskId: string; force: boolean }
  | { id: number; op: 'subscribe' }
  /** Exit once this reply is sent, if no task runs (a -dev agent leaving nothing behind). */
  | { id: number; op: 'exit' };

/** The request operations. */
export type SupervisorOp = SupervisorRequest['op'];

/** Result type of each op. */
export interface SupervisorResults {
  hello: { pid: number; version: number; tasks: number };
  start: SupervisedTaskStatus;
  signal: Record<string, never>;
  stop: SupervisedTaskStatus;
  status: SupervisedTaskStatus;
  list: SupervisedTaskStatus[];
  stats: SupervisedTaskStats;
  forget: Record<string, never>;
  subscribe: Record<string, never>;
  /** Whether the supervisor exits (false while a task still runs); `pid` to wait for. */
  exit: { exiting: boolean; pid: number };
}

/** Error codes the supervisor answers with. */
export const SupervisorErrorCode = {
  BadRequest: 'SUPERVISOR_BAD_REQUEST',
  TaskNotFound: 'SUPERVISOR_TASK_NOT_FOUND',
  TaskExists: 'SUPERVISOR_TASK_EXISTS',
  SpawnFailed: 'SUPERVISOR_SPAWN_FAILED',
  SignalFailed: 'SUPERVISOR_SIGNAL_FAILED',
  Unavailable: 'SUPERVISOR_UNAVAILABLE',
} as const;
export type SupervisorErrorCode = (typeof SupervisorErrorCode)[keyof typeof SupervisorErrorCode];

/** A reply to one request. */
export type SupervisorResponse =
  | { id: number; ok: true; result: unknown }
  | { id: number; ok: false; error: { code: SupervisorErrorCode; message: string } };

/** A pushed notification (after `subscribe`). */
export interface SupervisorExitEvent {
  event: 'exit';
  taskId: string;
  /** The pid of the run that exited, so a listener can tell it from an earlier run of the same task id. */
  pid?: number;
  exit: SupervisedExit;
}

/** Any line the supervisor sends. */
export type SupervisorMessage = SupervisorResponse | SupervisorExitEvent;

/** An error reported by (or about reaching) the supervisor. */
export class SupervisorError extends Error {
  constructor(
    readonly code: SupervisorErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'SupervisorError';
  }
}

/** Encodes one message as a line. */
export function encodeMessage(msg: SupervisorRequest | SupervisorMessage): string {
  return JSON.stringify(msg) + '\n';
}

/**
 * Splits a byte stream into JSON lines. Feed it chunks; it calls onLine for each complete
 * line and keeps the partial tail. A line that is not JSON goes to onBad.
 */
export class LineDecoder {
  private tail = '';
  constructor(
    private readonly onLine: (value: unknown) => void,
    private readonly onBad: (line: string) => void = () => {},
  ) {}

  /** Consumes one chunk of the stream. */
  push(chunk: Buffer | string): void {
    this.tail += typeof chunk === 'string' ? chunk : chunk.toString('utf8');
    let nl: number;
    while ((nl = this.tail.indexOf('\n')) >= 0) {
      const line = this.tail.slice(0, nl);
      this.tail = this.tail.slice(nl + 1);
      if (line.trim() === '') continue;
      let value: unknown;
      try {
        value = JSON.parse(line);
      } catch {
        this.onBad(line);
        continue;
      }
      this.onLine(value);
    }
  }
}

/** Paths of the supervisor's files under a client data dir. */
export interface SupervisorPaths {
  dir: string;
  socket: string;
  pidFile: string;
  exitsDir: string;
  logFile: string;
}

/** Where the supervisor of `dataDir` keeps its socket, pid file and exit records. */
export function supervisorPaths(dataDir: string): SupervisorPaths {
  const dir = join(dataDir, 'supervisor');
  return {
    dir,
    socket: join(dir, 'supervisor.sock'),
    pidFile: join(dir, 'supervisor.pid'),
    exitsDir: join(dir, 'exits'),
    logFile: join(dir, 'supervisor.log'),
  };
}

/** A task id made safe as a file name (`<allocId>/<task>` contains a slash). */
export function escapeTaskId(taskId: string): string {
  return encodeURIComponent(taskId).replace(/\./g, '%2E');
}
