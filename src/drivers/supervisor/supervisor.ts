/**
 * The supervisor daemon: the parent of every raw_exec task of one client data dir. It
 * outlives the agent, so tasks keep running (and keep their stdout/stderr pipes) while the
 * agent restarts, and it records every exit durably so a restarted agent learns the truth.
 *
 *   agent ──unix socket──► Supervisor ──spawn (setsid)──► task process group
 *                              │  ▲ stdout/stderr pipes → RotatingFileWriter
 *                              └──┴─ exit → ExitStore (fsync) → `exit` event to subscribers
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { RotatingFileWriter, megabytes } from '../logs/rotating-file-writer.js';
import { processGroupMembers, readProcStat } from '../proc/proc-stat.js';
import { ProcGroupTable } from '../proc/proc-group-table.js';
import { ExitStore } from './exit-store.js';
import { signalNumber, signalNumberOf } from './signals.js';
import { setLongTimeout, type LongTimeout } from '../../time/long-timeout.js';
import { systemClock, type Clock, type Timer } from '../../time/clock.js';
import {
  LineDecoder,
  PROTOCOL_VERSION,
  SupervisorError,
  SupervisorErrorCode,
  encodeMessage,
  supervisorPaths,
  type SupervisedExit,
  type SupervisedTaskSpec,
  type SupervisedTaskStatus,
  type SupervisorExitEvent,
  type SupervisorPaths,
  type SupervisorRequest,
  type SupervisorResponse,
  type SupervisorResults,
} from './protocol.js';

/** Options of a supervisor instance. */
export interface SupervisorOptions {
  dataDir: string;
  /** Exit after this long with no running task and no connected agent. */
  idleMs: number;
  log: (msg: string) => void;
  /** Time for the idle exit, exit stamps and re-checks; the system clock unless a test injects one. */
  clock?: Clock;
}

interface SupervisedTask {
  spec: SupervisedTaskSpec;
  child: ChildProcess | null;
  pid: number;
  startTime: number;
  startedAt: number;
  exit: SupervisedExit | null;
  killTimer: LongTimeout | null;
  stopWaiters: Array<() => void>;
  writers: RotatingFileWriter[];
}

/** How often, and how many times, a task's leftover process group is re-checked after a SIGKILL. */
const GROUP_RECHECK_MS = 50;
const GROUP_RECHECK_TRIES = 20;
const SIGKILL = 9;
/** How often, and how many times, a signal is retried while a sandbox is still starting. */
const SANDBOX_SIGNAL_RETRY_MS = 25;
const SANDBOX_SIGNAL_TRIES = 80;

/** One supervisor: serves the socket, owns the task processes. */
export class Supervisor {
  private readonly clock: Clock;
  private readonly paths: SupervisorPaths;
  private readonly exits: ExitStore;
  private readonly tasks = new Map<string, SupervisedTask>();
  /** One /proc scan serves the stats requests of every task for half a second. */
  private readonly procTable: ProcGroupTable;
  private readonly conns = new Set<Socket>();
  private readonly subscribers = new Set<Socket>();
  private server: Server | null = null;
  private idleSince: number;
  private idleTimer: Timer | null = null;

  constructor(private readonly opts: SupervisorOptions) {
    this.clock = opts.clock ?? systemClock;
    this.procTable = new ProcGroupTable(() => this.clock.now());
    this.idleSince = this.clock.now();
    this.paths = supervisorPaths(opts.dataDir);
    this.exits = new ExitStore(this.paths.exitsDir);
  }

  /** Starts listening on the socket (the caller has taken the pid-file lock). */
  async listen(): Promise<void> {
    const server = createServer((sock) => this.onConnection(sock));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.paths.socket, () => {
        server.off('error', reject);
        resolve();
      });
    });
    this.server = server;
    this.armIdleCheck();
  }

  /** Checks for idleness every idleMs/4 (0.25–5 s) while serving. */
  private armIdleCheck(): void {
    this.idleTimer = this.clock.setTimer(Math.max(250, Math.min(5_000, this.opts.idleMs / 4)), () => {
      this.checkIdle();
      if (this.server) this.armIdleCheck();
    });
  }

  /** Stops serving; running tasks are left alone (they become orphans). */
  async close(): Promise<void> {
    this.idleTimer?.cancel();
    for (const s of this.conns) s.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
    this.server = null;
  }

  /** Number of tasks still running. */
  runningCount(): number {
    let n = 0;
    for (const t of this.tasks.values()) if (!t.exit) n++;
    return n;
  }

  private checkIdle(): void {
    if (this.runningCount() > 0 || this.conns.size > 0) {
      this.idleSince = this.clock.now();
      return;
    }
    if (this.clock.now() - this.idleSince >= this.opts.idleMs) {
      this.opts.log('idle: no tasks and no agent; exiting');
      this.onIdleExit();
    }
  }

  /** Called when the idle timeout fires or an `exit` is asked for with no task running; the entry point replaces it to clean up and exit. */
  onIdleExit: () => void = () => {};

  private onConnection(sock: Socket): void {
    this.conns.add(sock);
    const decoder = new LineDecoder(
      (v) => void this.onRequest(sock, v),
      (line) => this.opts.log(`bad request line: ${line.slice(0, 200)}`),
    );
    sock.on('data', (chunk) => decoder.push(chunk));
    sock.on('error', () => {});
    sock.on('close', () => {
      this.conns.delete(sock);
      this.subscribers.delete(sock);
      this.idleSince = this.clock.now();
    });
  }

  private async onRequest(sock: Socket, raw: unknown): Promise<void> {
    const req = raw as SupervisorRequest;
    const id = typeof req?.id === 'number' ? req.id : -1;
    let resp: SupervisorResponse;
    try {
      const result = await this.handle(sock, req);
      resp = { id, ok: true, result };
    } catch (err) {
      const code = err instanceof SupervisorError ? err.code : SupervisorErrorCode.BadRequest;
      resp = { id, ok: false, error: { code, message: err instanceof Error ? err.message : String(err) } };
    }
    if (!sock.destroyed) sock.write(encodeMessage(resp));
  }

  private async handle(sock: Socket, req: SupervisorRequest): Promise<SupervisorResults[SupervisorRequest['op']]> {
    if (!req || typeof req !== 'object' || typeof req.op !== 'string') {
      throw new SupervisorError(SupervisorErrorCode.BadRequest, 'request: "op" is required');
    }
    switch (req.op) {
      case 'hello':
        return { pid: process.pid, version: PROTOCOL_VERSION, tasks: this.tasks.size };
      case 'start':
        return this.start(req.spec);
      case 'signal':
        this.signalGroup(this.mustGet(req.taskId), signalNumber(req.signal));
        return {};
      case 'stop':
        return this.stop(req.taskId, req.timeoutMs, req.signal);
      case 'status':
        return this.status(req.taskId);
      case 'list':
        return [...this.tasks.keys()].map((id) => this.status(id));
      case 'stats': {
        const t = this.mustGet(req.taskId);
        if (t.exit) return { rssBytes: 0, cpuTicks: 0, pids: [] };
        return this.procTable.usage(t.pid);
      }
      case 'forget':
        this.forget(req.taskId, req.force);
        return {};
      case 'subscribe':
        this.subscribers.add(sock);
        return {};
      case 'exit': {
        const exiting = this.runningCount() === 0;
        // After the reply is written: the entry point's shutdown closes every connection.
        if (exiting) setImmediate(() => this.onIdleExit());
        return { exiting, pid: process.pid };
      }
      default: {
        const op: never = req;
        throw new SupervisorError(SupervisorErrorCode.BadRequest, `unknown op ${JSON.stringify((op as { op: unknown }).op)}`);
      }
    }
  }

  private mustGet(taskId: string): SupervisedTask {
    const t = this.tasks.get(taskId);
    if (!t) throw new SupervisorError(SupervisorErrorCode.TaskNotFound, `task "${taskId}" is not supervised`);
    return t;
  }

  private status(taskId: string): SupervisedTaskStatus {
    const t = this.tasks.get(taskId);
    if (t) {
      return { taskId, state: t.exit ? 'exited' : 'running', pid: t.pid, startTime: t.startTime, startedAt: t.startedAt, exit: t.exit };
    }
    // Not in memory (e.g. a previous supervisor ran it): the exit record may still say how it ended.
    const rec = this.exits.read(taskId);
    if (rec) {
      return {
        taskId,
        state: 'exited',
        pid: rec.pid,
        startTime: rec.startTime,
        startedAt: rec.startedAt,
        exit: { exitCode: rec.exitCode, signal: rec.signal, exitedAt: rec.exitedAt },
      };
    }
    return { taskId, state: 'unknown', pid: 0, startTime: 0, startedAt: 0, exit: null };
  }

  private validateSpec(spec: SupervisedTaskSpec): void {
    const need = (ok: boolean, field: string) => {
      if (!ok) throw new SupervisorError(SupervisorErrorCode.BadRequest, `start: field "${field}" is missing or invalid`);
    };
    need(!!spec && typeof spec === 'object', 'spec');
    need(typeof spec.taskId === 'string' && spec.taskId !== '', 'taskId');
    need(typeof spec.file === 'string' && spec.file !== '', 'file');
    need(Array.isArray(spec.args) && spec.args.every((a) => typeof a === 'string'), 'args');
    need(typeof spec.cwd === 'string', 'cwd');
    need(!!spec.env && typeof spec.env === 'object', 'env');
    need(typeof spec.taskName === 'string' && spec.taskName !== '', 'taskName');
    need(typeof spec.logDir === 'string' && spec.logDir !== '', 'logDir');
    need(
      spec.signalProcs === undefined || (Array.isArray(spec.signalProcs) && spec.signalProcs.every((f) => typeof f === 'string' && f.startsWith('/sys/fs/cgroup/'))),
      'signalProcs',
    );
  }

  private async start(spec: SupervisedTaskSpec): Promise<SupervisedTaskStatus> {
    this.validateSpec(spec);
    const prev = this.tasks.get(spec.taskId);
    if (prev && !prev.exit) {
      throw new SupervisorError(SupervisorErrorCode.TaskExists, `task "${spec.taskId}" is already running (pid ${prev.pid})`);
    }
    // A restart reuses the task id: the previous run's record is superseded.
    this.tasks.delete(spec.taskId);
    this.exits.remove(spec.taskId);

    const writers = [
      new RotatingFileWriter({ dir: spec.logDir, prefix: `${spec.taskName}.stdout`, maxFiles: spec.maxFiles, maxFileSizeBytes: megabytes(spec.maxFileSizeMB) }),
      new RotatingFileWriter({ dir: spec.logDir, prefix: `${spec.taskName}.stderr`, maxFiles: spec.maxFiles, maxFileSizeBytes: megabytes(spec.maxFileSizeMB) }),
    ];
    const child = spawn(spec.file, spec.args, {
      cwd: spec.cwd,
      env: spec.env,
      detached: true, // setsid: the task leads its own process group, apart from ours.
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    // Read the start time now: the child is not reaped before the event loop turns, so even a
    // task that exits at once still has its /proc entry here (later it may be gone, leaving 0,
    // and a start time of 0 cannot tell our process from a PID-reused stranger).
    const startTime = child.pid ? (readProcStat(child.pid)?.startTime ?? 0) : 0;
    try {
      await new Promise<void>((resolve, reject) => {
        child.once('spawn', resolve);
        child.once('error', reject);
      });
    } catch (err) {
      for (const w of writers) w.close();
      throw new SupervisorError(SupervisorErrorCode.SpawnFailed, `failed to start "${spec.file}": ${(err as Error).message}`);
    }
    const pid = child.pid!;
    const task: SupervisedTask = {
      spec,
      child,
      pid,
      startTime,
      startedAt: this.clock.now(),
      exit: null,
      killTimer: null,
      stopWaiters: [],
      writers,
    };
    this.tasks.set(spec.taskId, task);
    child.stdout!.on('data', (b: Buffer) => this.writeLog(task, 0, b));
    child.stderr!.on('data', (b: Buffer) => this.writeLog(task, 1, b));
    child.stdout!.on('close', () => task.writers[0]!.close());
    child.stderr!.on('close', () => task.writers[1]!.close());
    child.on('error', (err) => this.opts.log(`task ${spec.taskId}: ${err.message}`));
    child.on('exit', (code, sig) => this.onExit(task, code, sig));
    this.opts.log(`started ${spec.taskId} pid ${pid}`);
    return this.status(spec.taskId);
  }

  private writeLog(task: SupervisedTask, which: 0 | 1, data: Buffer): void {
    try {
      task.writers[which]!.write(data);
    } catch (err) {
      this.opts.log(`task ${task.spec.taskId}: log write failed: ${(err as Error).message}`);
    }
  }

  private onExit(task: SupervisedTask, code: number | null, sig: NodeJS.Signals | null): void {
    const signal = sig ? signalNumberOf(sig) : 0;
    // As a shell does (and Nomad's executor), a signal death reads as exit code 128+signal.
    const exitCode = code ?? (signal ? 128 + signal : -1);
    task.exit = { exitCode, signal, exitedAt: this.clock.now() };
    task.child = null;
    task.killTimer?.cancel();
    task.killTimer = null;
    // The task is over when its main process is: whatever it started in its group goes too,
    // or every restart of e.g. `sh -c "server & …"` leaks another server.
    this.killGroupRemnants(task);
    try {
      this.exits.write({ taskId: task.spec.taskId, pid: task.pid, startTime: task.startTime, startedAt: task.startedAt, ...task.exit });
    } catch (err) {
      this.opts.log(`task ${task.spec.taskId}: cannot record exit: ${(err as Error).message}`);
    }
    this.opts.log(`exited ${task.spec.taskId} pid ${task.pid} code ${exitCode} signal ${signal}`);
    const ev: SupervisorExitEvent = { event: 'exit', taskId: task.spec.taskId, pid: task.pid, exit: task.exit };
    const line = encodeMessage(ev);
    for (const s of this.subscribers) if (!s.destroyed) s.write(line);
    for (const w of task.stopWaiters.splice(0)) w();
    this.idleSince = this.clock.now();
  }

  private signalGroup(task: SupervisedTask, sig: number): void {
    if (task.exit) throw new SupervisorError(SupervisorErrorCode.SignalFailed, `task "${task.spec.taskId}" has exited`);
    if (task.spec.signalProcs && sig !== SIGKILL) return this.signalSandbox(task, sig, task.spec.signalProcs);
    try {
      process.kill(-task.pid, sig);
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      if (e.code !== 'ESRCH') throw new SupervisorError(SupervisorErrorCode.SignalFailed, `signal ${sig} to task "${task.spec.taskId}": ${e.message}`);
    }
  }

  /**
   * Signals every process of a sandboxed task's cgroup but the outer wrapper (which would die of
   * it). While the sandbox is still being set up only bwrap's own processes exist (its pid-1 init
   * ignores signals): the signal is retried until the task's command is there to receive it.
   */
  private signalSandbox(task: SupervisedTask, sig: number, procsFiles: string[], attempt = 0): void {
    const pids = new Set<number>();
    for (const f of procsFiles) {
      try {
        for (const l of readFileSync(f, 'utf8').split('\n')) if (l !== '') pids.add(Number(l));
      } catch {
        // The cgroup is gone: nothing left to signal.
      }
    }
    pids.delete(task.pid);
    const comm = (pid: number) => {
      try {
        return readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
      } catch {
        return '';
      }
    };
    if (![...pids].some((p) => comm(p) !== 'bwrap' && comm(p) !== '') && attempt < SANDBOX_SIGNAL_TRIES && !task.exit) {
      setTimeout(() => this.signalSandbox(task, sig, procsFiles, attempt + 1), SANDBOX_SIGNAL_RETRY_MS).unref();
      return;
    }
    for (const pid of pids) {
      try {
        process.kill(pid, sig);
      } catch {
        // Exited meanwhile.
      }
    }
  }

  /**
   * SIGKILLs what is left of an exited task's process group, re-checking until it is empty.
   * Safe with the leader gone: Linux does not reuse a number as a pid while it is some live
   * process's group id. A member whose pid equals the pgid would be a newcomer that reused the
   * number once the group had emptied, so its group is not ours and is left alone.
   */
  private killGroupRemnants(task: SupervisedTask, attempt = 0): void {
    const pgid = task.pid;
    if (!Number.isInteger(pgid) || pgid <= 1) return;
    try {
      process.kill(-pgid, 0); // cheap probe: ESRCH means the group is already empty
    } catch {
      return;
    }
    const members = processGroupMembers(pgid);
    if (members.length === 0 || members.some((m) => m.pid === pgid)) return;
    try {
      process.kill(-pgid, 'SIGKILL');
    } catch {
      return; // emptied meanwhile
    }
    if (attempt === 0) this.opts.log(`task ${task.spec.taskId}: killed ${members.length} leftover process(es) of group ${pgid}`);
    if (attempt + 1 >= GROUP_RECHECK_TRIES) return;
    // A member in uninterruptible sleep dies late, and a fork racing the kill adds a member.
    this.clock.setTimer(GROUP_RECHECK_MS, () => this.killGroupRemnants(task, attempt + 1));
  }

  private async stop(taskId: string, timeoutMs: number, signal: string): Promise<SupervisedTaskStatus> {
    const task = this.mustGet(taskId);
    if (task.exit) {
      this.killGroupRemnants(task);
      return this.status(taskId);
    }
    const sig = signalNumber(signal || 'SIGTERM');
    const exited = new Promise<void>((resolve) => task.stopWaiters.push(resolve));
    this.signalGroup(task, sig);
    if (!task.killTimer) {
      task.killTimer = setLongTimeout(() => {
        task.killTimer = null;
        if (!task.exit) {
          try {
            process.kill(-task.pid, 'SIGKILL');
          } catch {
            // Already gone.
          }
        }
      }, Math.max(0, Number(timeoutMs) || 0));
    }
    await exited;
    return this.status(taskId);
  }

  private forget(taskId: string, force: boolean): void {
    const task = this.tasks.get(taskId);
    if (task && !task.exit) {
      if (!force) throw new SupervisorError(SupervisorErrorCode.TaskExists, `task "${taskId}" is still running`);
      try {
        process.kill(-task.pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
      // The exit handler still fires and records; drop the record once it does.
      task.stopWaiters.push(() => {
        this.tasks.delete(taskId);
        this.exits.remove(taskId);
      });
      return;
    }
    if (task) this.killGroupRemnants(task);
    this.tasks.delete(taskId);
    this.exits.remove(taskId);
  }
}
