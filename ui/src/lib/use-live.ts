/**
 * useLive: a read of the API that follows changes. It fetches once, then refetches when the
 * event hub delivers an event the caller's `watch` accepts (at most one request in flight,
 * changes during it coalesced into one more). A failed read keeps the last data, shows the
 * error and retries with exponential backoff (1 s … 30 s) — never a tight loop.
 */
import { useLayoutEffect, useRef, useState } from 'preact/hooks';
import type { StreamEvent } from '../../../src/server/events/event.js';
import { apiGet, isForbidden } from './api.js';
import { hub } from './event-hub.js';

/** Which events make a view stale: a topic list, or a predicate. */
export type Watch = ReadonlyArray<StreamEvent['Topic']> | ((ev: StreamEvent) => boolean);

export interface LiveState<T> {
  data: T | undefined;
  error: Error | undefined;
  loading: boolean;
  /** When the next retry after an error starts (ms since epoch). */
  retryAt: number | undefined;
  /** Refetch now (after an action). */
  refresh: () => void;
}

const MAX_BACKOFF_MS = 30_000;

function matches(watch: Watch, ev: StreamEvent): boolean {
  return typeof watch === 'function' ? watch(ev) : watch.includes(ev.Topic);
}

/** Follows `path` (undefined = nothing to read yet). */
export function useLive<T>(path: string | undefined, watch: Watch): LiveState<T> {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<Error | undefined>(undefined);
  const [loading, setLoading] = useState(true);
  const [retryAt, setRetryAt] = useState<number | undefined>(undefined);
  const watchRef = useRef(watch);
  watchRef.current = watch;
  const refreshRef = useRef<() => void>(() => {});

  // A layout effect starts the first read during the render that mounts the view, not a frame later.
  useLayoutEffect(() => {
    setData(undefined);
    setError(undefined);
    setLoading(path !== undefined);
    if (path === undefined) return;
    let alive = true;
    let inFlight = false;
    let dirty = false;
    let failures = 0;
    let retryTimer: ReturnType<typeof setTimeout> | undefined;
    const ac = new AbortController();

    const load = async (): Promise<void> => {
      if (!alive) return;
      if (inFlight) {
        dirty = true;
        return;
      }
      inFlight = true;
      dirty = false;
      try {
        const { data: d, index } = await apiGet<T>(path, ac.signal);
        if (!alive) return;
        failures = 0;
        setData(d);
        setError(undefined);
        setRetryAt(undefined);
        hub.reportIndex(index);
      } catch (err) {
        if (!alive) return;
        setError(err as Error);
        clearTimeout(retryTimer);
        // A refusal stands until the token changes (which re-mounts the page): no retry loop.
        if (isForbidden(err)) {
          setRetryAt(undefined);
          return;
        }
        failures++;
        const wait = Math.min(MAX_BACKOFF_MS, 1000 * 2 ** Math.min(failures - 1, 5));
        setRetryAt(Date.now() + wait);
        retryTimer = setTimeout(() => void load(), wait);
      } finally {
        inFlight = false;
        if (alive) setLoading(false);
      }
      if (dirty && alive) void load();
    };
    refreshRef.current = () => void load();
    const unsubscribe = hub.subscribe((events) => {
      if (events === null || events.some((ev) => matches(watchRef.current, ev))) void load();
    });
    void load();
    return () => {
      alive = false;
      ac.abort();
      clearTimeout(retryTimer);
      unsubscribe();
    };
  }, [path]);

  return { data, error, loading, retryAt, refresh: () => refreshRef.current() };
}
