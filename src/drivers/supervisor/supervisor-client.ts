/**
 * The agent's side of the supervisor socket: connects (starting the daemon detached when
 * nobody answers), sends typed requests and receives exit events. One client per driver.
 */
import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  LineDecoder,
  SupervisorError,
  SupervisorErrorCode,
  encodeMessage,
  supervisorPaths,
  type SupervisorExitEvent,
  type SupervisorMessage,
  type SupervisorPaths,
  type SupervisorRequest,
  type SupervisorResults,
} from './protocol.js';

/** Path of the compiled daemon entry point, next to this file. */
export const SUPERVISOR_MAIN = fileURLToPath(new URL('./supervisor-main.js', import.meta.url));

/** Longest unix socket path Linux accepts (sun_path is 108 bytes including the NUL). */
const MAX_SOCKET_PATH = 107;

/** Options of a supervisor client. */
export interface SupervisorClientOptions {
  dataDir: string;
  /** Idle timeout handed to a daemon this client starts. */
  idleMs?: number;
  /** How long to wait for a freshly started daemon to answer. */
  startTimeoutMs?: number;
}

type Pending = { resolve: (v: unknown) => void; reject: (e: Error) => void };
type RequestBody<Op extends SupervisorRequest['op']> = Omit<Extract<SupervisorRequest, { op: Op }>, 'id' | 'op'>;

/** A connection to the supervisor of one data dir; reconnects (and restarts it) on demand. */
export class SupervisorClient {
  readonly paths: SupervisorPaths;
  private sock: Socket | null = null;
  private connecting: Promise<Socket> | null = null;
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private closed = false;
  /** Called for every task exit the supervisor reports. */
  onExit: (ev: SupervisorExitEvent) => void = () => {};
  /** Called when an established connection drops (the supervisor died or closed it). */
  onDisconnect: () => void = () => {};

  private readonly opts: SupervisorClientOptions;

  constructor(opts: SupervisorClientOptions) {
    // Absolute: the daemon runs with another working directory.
    this.opts = { ...opts, dataDir: resolve(opts.dataDir) };
    this.paths = supervisorPaths(this.opts.dataDir);
    if (Buffer.byteLength(this.paths.socket) > MAX_SOCKET_PATH) {
      throw new SupervisorError(
        SupervisorErrorCode.Unavailable,
        `supervisor socket path "${this.paths.socket}" is longer than ${MAX_SOCKET_PATH} bytes; use a shorter data_dir`,
      );
    }
  }

  /** Whether a connection is currently open. */
  get connected(): boolean {
    return this.sock !== null && !this.sock.destroyed;
  }

  /** Sends one request and resolves with its typed result; rejects with SupervisorError. */
  async request<Op extends SupervisorRequest['op']>(op: Op, body: RequestBody<Op>): Promise<SupervisorResults[Op]> {
    const sock = await this.ensureConnected();
    const id = this.nextId++;
    return new Promise<SupervisorResults[Op]>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      sock.write(encodeMessage({ ...body, op, id } as SupervisorRequest));
    });
  }

  /** Connects, starting the daemon if nobody answers; subscribes to exit events. Idempotent. */
  ensureConnected(): Promise<Socket> {
    if (this.closed) return Promise.reject(new SupervisorError(SupervisorErrorCode.Unavailable, 'supervisor client is closed'));
    if (this.sock && !this.sock.destroyed) return Promise.resolve(this.sock);
    if (!this.connecting) {
      this.connecting = this.connectOrStart().finally(() => {
        this.connecting = null;
      });
    }
    return this.connecting;
  }

  /**
   * Asks the daemon this client is connected to to exit, and waits (up to `timeoutMs`) until its
   * process is gone; resolves false if it did not exit (a task still runs) or none was connected.
   * Closes the connection either way. For a -dev agent's shutdown, after every task was destroyed.
   */
  async stopDaemon(timeoutMs = 5_000): Promise<boolean> {
    if (!this.connected) {
      this.close();
      return false;
    }
    let answer: SupervisorResults['exit'];
    try {
      answer = await this.request('exit', {});
    } catch {
      this.close();
      return false;
    }
    this.close();
    if (!answer.exiting) return false;
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      try {
        process.kill(answer.pid, 0);
      } catch {
        return true;
      }
      await new Promise((r) => setTimeout(r, 20));
    }
    return false;
  }

  /** Closes the connection; the daemon and its tasks keep running. */
  close(): void {
    this.closed = true;
    this.sock?.destroy();
    this.sock = null;
  }

  private async connectOrStart(): Promise<Socket> {
    let sock = await tryConnect(this.paths.socket);
    if (!sock) {
      this.startDaemon();
      const deadline = Date.now() + (this.opts.startTimeoutMs ?? 10_000);
      let delay = 10;
      while (!sock && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, delay));
        delay = Math.min(200, delay * 2);
        sock = await tryConnect(this.paths.socket);
      }
    }
    if (!sock) throw new SupervisorError(SupervisorErrorCode.Unavailable, `supervisor did not answer on ${this.paths.socket}`);
    this.attach(sock);
    // Subscribe before anything else so no exit is missed on this connection.
    const id = this.nextId++;
    const subscribed = new Promise<unknown>((resolve, reject) => this.pending.set(id, { resolve, reject }));
    sock.write(encodeMessage({ id, op: 'subscribe' }));
    await subscribed;
    return sock;
  }

  private startDaemon(): void {
    mkdirSync(this.paths.dir, { recursive: true });
    const args = [SUPERVISOR_MAIN, this.opts.dataDir, String(this.opts.idleMs ?? 60_000)];
    // Detached (own session) and unref'd: the daemon must outlive this agent, even kill -9.
    const child = spawn(process.execPath, ['--optimize-for-size', ...args], {
      detached: true,
      stdio: 'ignore',
      cwd: this.paths.dir,
    });
    child.on('error', () => {});
    child.unref();
  }

  private attach(sock: Socket): void {
    this.sock = sock;
    const decoder = new LineDecoder((v) => this.onMessage(v as SupervisorMessage));
    sock.on('data', (chunk) => decoder.push(chunk));
    sock.on('error', () => {});
    sock.on('close', () => {
      if (this.sock === sock) this.sock = null;
      const err = new SupervisorError(SupervisorErrorCode.Unavailable, 'connection to supervisor lost');
      for (const p of this.pending.values()) p.reject(err);
      this.pending.clear();
      if (!this.closed) this.onDisconnect();
    });
  }

  private onMessage(msg: SupervisorMessage): void {
    if ('event' in msg) {
      if (msg.event === 'exit') this.onExit(msg);
      return;
    }
    const p = this.pending.get(msg.id);
    if (!p) return;
    this.pending.delete(msg.id);
    if (msg.ok) p.resolve(msg.result);
    else p.reject(new SupervisorError(msg.error.code, msg.error.message));
  }
}

function tryConnect(path: string): Promise<Socket | null> {
  return new Promise((resolve) => {
    const s = connect(path);
    s.once('connect', () => {
      s.removeAllListeners('error');
      resolve(s);
    });
    s.once('error', () => {
      s.destroy();
      resolve(null);
    });
  });
}
