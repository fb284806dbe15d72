/**
 * One listener per long-lived signal, fanned out to many subscribers. An EventTarget checks
 * every listener already added for a duplicate before adding one, and scans the list again to
 * remove one, so 10,000 held blocking queries each listening on the agent's shutdown signal made
 * every new query (and every answered one) pay for all the others: O(N²) over a fleet's watches.
 * Here the signal gets one listener, and subscribing and unsubscribing are a Set's O(1).
 */

const fanouts = new WeakMap<AbortSignal, Set<() => void>>();

/**
 * Calls `fn` once when `signal` aborts (at once if it already has); the returned function
 * unsubscribes and may be called any number of times.
 */
export function onAbort(signal: AbortSignal, fn: () => void): () => void {
  if (signal.aborted) {
    fn();
    return () => undefined;
  }
  let subs = fanouts.get(signal);
  if (!subs) {
    const set = new Set<() => void>();
    subs = set;
    fanouts.set(signal, set);
    signal.addEventListener(
      'abort',
      () => {
        fanouts.delete(signal);
        for (const f of set) f();
        set.clear();
      },
      { once: true },
    );
  }
  const entry = () => fn();
  subs.add(entry);
  const set = subs;
  return () => {
    set.delete(entry);
  };
}
