/**
 * usePoll: samples an endpoint that has no change events (resource stats) every `everyMs`
 * while mounted and the tab is visible, keeping the last `keep` samples; failures back off
 * exponentially up to 30 s and are reported.
 */
import { useEffect, useState } from 'preact/hooks';
import { apiGet, isForbidden } from './api.js';

export function usePoll<T>(path: string | undefined, everyMs: number, keep: number): { samples: T[]; error: Error | undefined } {
  const [samples, setSamples] = useState<T[]>([]);
  const [error, setError] = useState<Error | undefined>(undefined);
  useEffect(() => {
    setSamples([]);
    if (!path) return;
    let alive = true;
    let failures = 0;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const ac = new AbortController();
    const tick = async () => {
      if (document.visibilityState === 'visible') {
        try {
          const { data } = await apiGet<T>(path, ac.signal);
          if (!alive) return;
          failures = 0;
          setError(undefined);
          setSamples((s) => [...s.slice(-(keep - 1)), data]);
        } catch (err) {
          if (!alive) return;
          failures++;
          setError(err as Error);
          // A refusal stands until the token changes (which re-mounts the page).
          if (isForbidden(err)) return;
        }
      }
      if (alive) timer = setTimeout(() => void tick(), failures ? Math.min(30_000, everyMs * 2 ** failures) : everyMs);
    };
    void tick();
    return () => {
      alive = false;
      ac.abort();
      clearTimeout(timer);
    };
  }, [path, everyMs, keep]);
  return { samples, error };
}
