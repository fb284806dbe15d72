/**
 * The agent's runtime profiles that V8's inspector records, in the formats Chrome DevTools
 * opens: a CPU profile (`.cpuprofile`, Performance panel), a sampling heap profile
 * (`.heapprofile`, Memory panel), a heap snapshot (`.heapsnapshot`, Memory panel) and a trace
 * of Node's and V8's trace events (`{"traceEvents": …}`, chrome://tracing or Perfetto). Each
 * uses its own in-process inspector session, closed when done; a recording over `seconds`
 * ends early, with what it has, when `signal` aborts.
 */
import { Session } from 'node:inspector/promises';
import { getHeapSnapshot } from 'node:v8';
import type { Readable } from 'node:stream';
import { CaravanError } from '../structs/caravan-error.js';

/** A recording the inspector refused (another trace running, no inspector in this build). */
export class ProfileFailedError extends CaravanError<'HTTP_INTERNAL'> {
  constructor(what: string, cause: unknown) {
    super('HTTP_INTERNAL', { reason: `${what} failed: ${cause instanceof Error ? cause.message : String(cause)}` }, { cause });
    this.name = 'ProfileFailedError';
  }
}

/** Resolves after `ms`, or at once when `signal` aborts. */
function recordFor(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const onAbort = () => {
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** Runs `body` with a connected session, disconnecting it whatever happens. */
async function withSession<T>(what: string, body: (s: Session) => Promise<T>): Promise<T> {
  const session = new Session();
  try {
    session.connect();
    return await body(session);
  } catch (err) {
    throw new ProfileFailedError(what, err);
  } finally {
    session.disconnect();
  }
}

/** A CPU profile of `seconds` of this process (`.cpuprofile` JSON). */
export function cpuProfile(seconds: number, signal: AbortSignal): Promise<string> {
  return withSession('CPU profile', async (s) => {
    await s.post('Profiler.enable');
    await s.post('Profiler.start');
    await recordFor(seconds * 1000, signal);
    const { profile } = await s.post('Profiler.stop');
    return JSON.stringify(profile);
  });
}

/** A sampling profile of the allocations made over `seconds` (`.heapprofile` JSON). */
export function samplingHeapProfile(seconds: number, signal: AbortSignal): Promise<string> {
  return withSession('allocation profile', async (s) => {
    await s.post('HeapProfiler.enable');
    await s.post('HeapProfiler.startSampling', { samplingInterval: 32 * 1024 });
    await recordFor(seconds * 1000, signal);
    const { profile } = await s.post('HeapProfiler.stopSampling');
    return JSON.stringify(profile);
  });
}

/** Node's and V8's trace events over `seconds` (Chrome's trace JSON). One trace at a time per process. */
export function traceEvents(seconds: number, signal: AbortSignal): Promise<string> {
  return withSession('trace', async (s) => {
    const events: unknown[] = [];
    s.on('NodeTracing.dataCollected', (m: { params: { value: unknown[] } }) => events.push(...m.params.value));
    await s.post('NodeTracing.start', { traceConfig: { includedCategories: ['node', 'node.async_hooks', 'v8'] } });
    await recordFor(seconds * 1000, signal);
    const complete = new Promise<void>((resolve) => s.once('NodeTracing.tracingComplete', () => resolve()));
    await s.post('NodeTracing.stop');
    await complete;
    return JSON.stringify({ traceEvents: events });
  });
}

/** A heap snapshot of this process (`.heapsnapshot` JSON), streamed as V8 writes it. */
export function heapSnapshot(): Readable {
  try {
    return getHeapSnapshot();
  } catch (err) {
    throw new ProfileFailedError('heap snapshot', err);
  }
}
