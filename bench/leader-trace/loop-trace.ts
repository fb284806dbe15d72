/**
 * A preload that traces what a server's main thread waits on, to tell a slow job registration's
 * causes apart (docs/control-plane-scale.md, "The leader in steady state"). Loaded with
 *
 *   CARAVAN_LOOP_TRACE=/tmp/leader.trace NODE_OPTIONS=--import=./dist/bench/leader-trace/loop-trace.js \
 *     node bin/caravan.js agent -server …
 *
 * it appends one line per event to the file, each with its wall-clock start (ms since the epoch,
 * comparable with the registration prober's log, `NODESIM_PROBE_LOG`) and its length in ms:
 *
 *   gc  <start> <ms> <minor|major|incremental|weak>   a V8 pause longer than 3 ms
 *   lag <start> <ms>                                   a 10 ms timer that ran more than 15 ms late
 *   req <start> <ms>                                   a PUT /v1/jobs, from the request's event to its last byte written
 *
 * Nothing is traced without the variable, nor on worker threads (the log's append worker).
 * `tail-breakdown.ts` reads the file beside the prober's.
 */
import { isMainThread } from 'node:worker_threads';
import { PerformanceObserver, performance } from 'node:perf_hooks';
import { openSync, writeSync } from 'node:fs';
import http from 'node:http';

const GC_MIN_MS = 3;
const TICK_MS = 10;
const LATE_MIN_MS = 15;
const GC_KINDS: Record<number, string> = { 1: 'minor', 2: 'major', 4: 'incremental', 8: 'weak' };

const file = process.env['CARAVAN_LOOP_TRACE'];
if (isMainThread && file) {
  const fd = openSync(file, 'a');
  const line = (kind: string, startMs: number, ms: number, extra = ''): void => {
    writeSync(fd, `${kind} ${(performance.timeOrigin + startMs).toFixed(0)} ${ms.toFixed(1)}${extra}\n`);
  };
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      const kind = (e as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind ?? 0;
      if (e.duration > GC_MIN_MS) line('gc', e.startTime, e.duration, ` ${GC_KINDS[kind] ?? kind}`);
    }
  }).observe({ entryTypes: ['gc'] });
  let last = performance.now();
  setInterval(() => {
    const now = performance.now();
    const late = now - last - TICK_MS;
    if (late > LATE_MIN_MS) line('lag', last + TICK_MS, late);
    last = now;
  }, TICK_MS).unref();
  // Every server the agent creates; only job registrations are traced.
  const emit = http.Server.prototype.emit;
  http.Server.prototype.emit = function (this: http.Server, event: string | symbol, ...args: unknown[]): boolean {
    if (event === 'request') {
      const [req, res] = args as [http.IncomingMessage, http.ServerResponse];
      if ((req.method === 'PUT' || req.method === 'POST') && req.url === '/v1/jobs') {
        const start = performance.now();
        res.once('finish', () => line('req', start, performance.now() - start));
      }
    }
    return Reflect.apply(emit, this, [event, ...args]) as boolean;
  } as typeof emit;
}
