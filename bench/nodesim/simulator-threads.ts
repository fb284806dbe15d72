/**
 * The node simulator split over K worker threads (simulator-thread.ts), each running N/K of the
 * simulated nodes on its own event loop, HTTP agents and gates; the main thread keeps the
 * scenarios and collects the threads' figures by message. One thread of node:http was the
 * simulator's bound at 10,000 nodes (about 4 ms of CPU a node in scenario 2 on one core while
 * the server idled half the time); K threads spread it over the machine's cores.
 *
 * Socket pools are per thread, so the shared pools' sizes are divided among the threads: the
 * server sees as many connections as with one thread (plus one held query per node either way).
 */
import { Worker } from 'node:worker_threads';
import type { PoolStats, RequestCounts } from './pooled-fetch.js';
import type { FromSimulatorThread, SimulatorThreadInput, ThreadStats, ToSimulatorThread } from './simulator-thread.js';

/** Options of SimulatorThreads.start. */
export interface SimulatorThreadsOptions {
  servers: string[];
  nodes: number;
  /** Worker threads (≥ 1); never more than the nodes. */
  threads: number;
  dataDir: string;
  /** Sockets of the shared pool for ordinary requests, per server, over all threads (default 256). */
  maxSockets?: number;
  /** Sockets of the heartbeat pool, per server, over all threads (default 64). */
  heartbeatSockets?: number;
  /** Called when a thread dies while running (an uncaught error in a client); default: throw it on the main thread. */
  onFailure?: (err: Error) => void;
}

/** The threads' figures, summed (and each thread's). */
export interface SimulatorStats {
  threads: ThreadStats[];
  pool: PoolStats;
  runningAllocs: number;
  /** The latest of the threads' timers (ms): the worst p99 and the worst max. */
  loopDelayMs: { p99: number; max: number };
  /** The threads' heaps in use, summed (MB). */
  heapUsedMB: number;
}

/** Node ranges of `nodes` over `threads`: as even as can be, in order. */
export function splitNodes(nodes: number, threads: number): { firstIndex: number; nodes: number }[] {
  const k = Math.max(1, Math.min(threads, nodes));
  const out = [];
  let first = 0;
  for (let t = 0; t < k; t++) {
    const n = Math.floor(nodes / k) + (t < nodes % k ? 1 : 0);
    out.push({ firstIndex: first, nodes: n });
    first += n;
  }
  return out;
}

function sumRequests(all: RequestCounts[]): RequestCounts {
  const out: RequestCounts = { register: 0, heartbeat: 0, watch: 0, fetchAllocs: 0, allocUpdates: 0, hostVolumes: 0, other: 0 };
  for (const r of all) for (const k of Object.keys(out) as (keyof RequestCounts)[]) out[k] += r[k];
  return out;
}

/** One worker thread and its outstanding questions. */
class SimulatorThread {
  warnings: Record<string, number> = {};
  stopping = false;
  private exited = false;
  private nextId = 0;
  private readonly pending = new Map<number, { resolve: (s: ThreadStats) => void; reject: (e: Error) => void }>();
  private stopped: (() => void) | null = null;

  constructor(readonly worker: Worker) {
    worker.on('message', (m: FromSimulatorThread) => {
      if (m.type === 'warnings') this.warnings = m.counts;
      else if (m.type === 'stats') {
        this.pending.get(m.id)?.resolve(m.stats);
        this.pending.delete(m.id);
      } else if (m.type === 'stopped') this.stopped?.();
    });
    worker.on('exit', () => {
      this.exited = true;
      for (const p of this.pending.values()) p.reject(new Error('simulator thread exited'));
      this.pending.clear();
      this.stopped?.();
    });
  }

  stats(gc: boolean): Promise<ThreadStats> {
    if (this.exited) return Promise.reject(new Error('simulator thread exited'));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage({ type: 'stats', id, gc } satisfies ToSimulatorThread);
    });
  }

  async stop(timeoutMs: number): Promise<void> {
    this.stopping = true;
    if (!this.exited) {
      await new Promise<void>((resolve) => {
        this.stopped = resolve;
        setTimeout(resolve, timeoutMs).unref();
        this.worker.postMessage({ type: 'stop' } satisfies ToSimulatorThread);
      });
    }
    await this.worker.terminate();
  }
}

/** The simulated nodes over K worker threads (see the file comment). */
export class SimulatorThreads {
  private constructor(private readonly threads: SimulatorThread[]) {}

  /** Starts every thread; resolves when every thread's clients are started (registration goes on in their loops). */
  static async start(opts: SimulatorThreadsOptions): Promise<SimulatorThreads> {
    const ranges = splitNodes(opts.nodes, opts.threads);
    const k = ranges.length;
    const fail = opts.onFailure ?? ((err: Error) => { throw err; });
    const threads: SimulatorThread[] = [];
    const started: Promise<void>[] = [];
    for (const range of ranges) {
      const input: SimulatorThreadInput = {
        servers: opts.servers,
        ...range,
        dataDir: opts.dataDir,
        maxSockets: Math.max(1, Math.ceil((opts.maxSockets ?? 256) / k)),
        heartbeatSockets: Math.max(1, Math.ceil((opts.heartbeatSockets ?? 64) / k)),
      };
      const worker = new Worker(new URL('./simulator-thread.js', import.meta.url), { workerData: input });
      const thread = new SimulatorThread(worker);
      threads.push(thread);
      started.push(
        new Promise<void>((resolve, reject) => {
          let up = false;
          worker.on('message', (m: FromSimulatorThread) => {
            if (m.type === 'started') {
              up = true;
              resolve();
            } else if (m.type === 'start-failed') reject(new Error(`simulator thread for nodes ${range.firstIndex}…: ${m.error}`));
          });
          worker.on('error', (err) => (up && !thread.stopping ? fail(err) : reject(err)));
          worker.on('exit', (code) => {
            if (!up) reject(new Error(`simulator thread for nodes ${range.firstIndex}… exited (code ${code}) before starting`));
            else if (!thread.stopping && code !== 0) fail(new Error(`simulator thread for nodes ${range.firstIndex}… exited (code ${code})`));
          });
        }),
      );
    }
    const sim = new SimulatorThreads(threads);
    try {
      await Promise.all(started);
    } catch (err) {
      await sim.stop();
      throw err;
    }
    return sim;
  }

  /** Threads running nodes. */
  get size(): number {
    return this.threads.length;
  }

  /** Every thread's figures, and their sums; with `gc`, each thread's heap is read after a full GC. */
  async stats(opts: { gc?: boolean } = {}): Promise<SimulatorStats> {
    const threads = await Promise.all(this.threads.map((t) => t.stats(opts.gc ?? false)));
    const pool: PoolStats = { blockingSockets: 0, shortSockets: 0, heartbeatSockets: 0, queued: 0, requests: sumRequests(threads.map((t) => t.pool.requests)) };
    for (const t of threads) {
      pool.blockingSockets += t.pool.blockingSockets;
      pool.shortSockets += t.pool.shortSockets;
      pool.heartbeatSockets += t.pool.heartbeatSockets;
      pool.queued += t.pool.queued;
    }
    return {
      threads,
      pool,
      runningAllocs: threads.reduce((n, t) => n + t.runningAllocs, 0),
      loopDelayMs: { p99: Math.max(...threads.map((t) => t.loopDelayMs.p99)), max: Math.max(...threads.map((t) => t.loopDelayMs.max)) },
      heapUsedMB: threads.reduce((n, t) => n + t.heapUsedMB, 0),
    };
  }

  /** The clients' warnings by message, summed over the threads (as last pushed: up to 200 ms old). */
  warnings(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const t of this.threads) for (const [msg, n] of Object.entries(t.warnings)) out[msg] = (out[msg] ?? 0) + n;
    return out;
  }

  /**
   * Stops every thread's clients, then the threads; a thread whose clients are not stopped in
   * `timeoutMs` (a starved thread shutting down thousands of clients) is terminated: inside the
   * bench's 30 s teardown step.
   */
  async stop(timeoutMs = 20_000): Promise<void> {
    await Promise.all(this.threads.map((t) => t.stop(timeoutMs)));
  }
}
