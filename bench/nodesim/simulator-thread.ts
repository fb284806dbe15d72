/**
 * One thread of the node simulator (a worker started by simulator-threads.ts): it runs the
 * simulated nodes [firstIndex, firstIndex + nodes) as a NodeSimulator of its own — its own event
 * loop, HTTP agents, pools and gates, its own SharedJobs — and answers the main thread by message:
 * its request counts, running allocations, event-loop delay and heap (`stats`), the warnings its
 * clients logged (pushed as they change), and `stop`. Each node is still one real Client on its
 * own connection state: a thread only decides which event loop runs it.
 */
import { isMainThread, parentPort, workerData, type MessagePort } from 'node:worker_threads';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { NodeSimulator } from './node-simulator.js';
import type { PoolStats } from './pooled-fetch.js';
import { warningCounter } from './warning-counter.js';

/** What a thread is given (workerData). */
export interface SimulatorThreadInput {
  servers: string[];
  firstIndex: number;
  nodes: number;
  dataDir: string;
  maxSockets: number;
  heartbeatSockets: number;
}

/** One thread's figures, read when the main thread asks. */
export interface ThreadStats {
  nodes: number;
  pool: PoolStats;
  /** Allocations whose every task runs, in this thread's clients' own view. */
  runningAllocs: number;
  /** How late this thread's timers ran since it started (ms). */
  loopDelayMs: { p99: number; max: number };
  /** This thread's V8 heap in use (MB), after a full GC when asked for and `gc` is exposed. */
  heapUsedMB: number;
  /** Whether heapUsedMB was read after a full GC. */
  afterGc: boolean;
}

/** Main thread → simulator thread. */
export type ToSimulatorThread = { type: 'stats'; id: number; gc: boolean } | { type: 'stop' };

/** Simulator thread → main thread. */
export type FromSimulatorThread =
  | { type: 'started' }
  | { type: 'start-failed'; error: string }
  | { type: 'warnings'; counts: Record<string, number> }
  | { type: 'stats'; id: number; stats: ThreadStats }
  | { type: 'stopped' };

/** Warnings are pushed at most this often (a burst of failed heartbeats is one message). */
const WARNINGS_PUSH_MS = 200;

async function run(port: MessagePort, input: SimulatorThreadInput): Promise<void> {
  const send = (m: FromSimulatorThread) => port.postMessage(m);
  let pushTimer: NodeJS.Timeout | null = null;
  const warnings = warningCounter(() => {
    pushTimer ??= setTimeout(() => {
      pushTimer = null;
      send({ type: 'warnings', counts: warnings.all() });
    }, WARNINGS_PUSH_MS);
  });
  const loopDelay = monitorEventLoopDelay({ resolution: 20 });
  loopDelay.enable();
  let sim: NodeSimulator;
  try {
    sim = await NodeSimulator.start({
      servers: input.servers,
      nodes: input.nodes,
      firstIndex: input.firstIndex,
      dataDir: input.dataDir,
      maxSockets: input.maxSockets,
      heartbeatSockets: input.heartbeatSockets,
      logger: warnings.logger,
    });
  } catch (err) {
    send({ type: 'start-failed', error: err instanceof Error ? (err.stack ?? err.message) : String(err) });
    return;
  }
  port.on('message', (m: ToSimulatorThread) => {
    if (m.type === 'stats') {
      const gc = (globalThis as { gc?: () => void }).gc;
      if (m.gc) gc?.();
      send({
        type: 'stats',
        id: m.id,
        stats: {
          nodes: input.nodes,
          pool: sim.poolStats(),
          runningAllocs: sim.runningAllocs(),
          loopDelayMs: { p99: loopDelay.percentile(99) / 1e6, max: loopDelay.max / 1e6 },
          heapUsedMB: process.memoryUsage().heapUsed / (1024 * 1024),
          afterGc: m.gc && gc !== undefined,
        },
      });
    } else if (m.type === 'stop') {
      loopDelay.disable();
      if (pushTimer) clearTimeout(pushTimer);
      void sim.stop().finally(() => {
        send({ type: 'warnings', counts: warnings.all() });
        send({ type: 'stopped' });
      });
    }
  });
  send({ type: 'started' });
}

if (!isMainThread && parentPort) void run(parentPort, workerData as SimulatorThreadInput);
