/** Loading, empty and error states, and the live-update indicator. */
import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { hub, type HubStatus } from '../lib/event-hub.js';
import type { LiveState } from '../lib/use-live.js';

export function Loading({ what }: { what: string }) {
  return (
    <p class="state loading" role="status" aria-live="polite">
      Loading {what}…
    </p>
  );
}

export function Empty({ children }: { children: ComponentChildren }) {
  return <p class="state empty">{children}</p>;
}

function secondsUntil(at: number | undefined): number {
  return at === undefined ? 0 : Math.max(0, Math.ceil((at - Date.now()) / 1000));
}

/** Re-renders every second while `active` (for retry countdowns). */
function useSecondTick(active: boolean): void {
  const [, set] = useState(0);
  useEffect(() => {
    if (!active) return;
    const t = setInterval(() => set((n) => n + 1), 1000);
    return () => clearInterval(t);
  }, [active]);
}

export function ErrorBox({ error, retryAt }: { error: Error; retryAt?: number | undefined }) {
  useSecondTick(retryAt !== undefined);
  return (
    <div class="state error" role="alert">
      <strong>Error:</strong> {error.message}
      {retryAt !== undefined && <span class="retry"> — retrying in {secondsUntil(retryAt)}s</span>}
    </div>
  );
}

/**
 * Renders `children(data)` once a live read has data; the error (kept above stale data), the
 * loading and the empty states otherwise.
 */
export function LiveView<T>(props: {
  live: LiveState<T>;
  what: string;
  empty?: (data: T) => boolean;
  emptyText?: ComponentChildren;
  children: (data: T) => ComponentChildren;
}) {
  const { live, what } = props;
  const err = live.error ? <ErrorBox error={live.error} retryAt={live.retryAt} /> : null;
  if (live.data === undefined) return err ?? <Loading what={what} />;
  if (props.empty?.(live.data)) {
    return (
      <>
        {err}
        <Empty>{props.emptyText ?? `No ${what}.`}</Empty>
      </>
    );
  }
  return (
    <>
      {err}
      {props.children(live.data)}
    </>
  );
}

/** The live-update state of the event stream, in the header. */
export function LiveIndicator() {
  const [status, setStatus] = useState<HubStatus>(hub.status);
  useEffect(() => hub.onStatus(setStatus), []);
  useSecondTick(status.state === 'retrying');
  const label =
    status.state === 'live'
      ? 'Live'
      : status.state === 'retrying'
        ? `Live updates lost (${status.message ?? 'error'}); retrying in ${secondsUntil(status.retryAt)}s`
        : status.state === 'connecting'
          ? 'Connecting…'
          : 'Idle';
  return (
    <span class={`live live-${status.state}`} role="status" aria-live="polite" title={label}>
      <span class="dot" aria-hidden="true" />
      {label}
    </span>
  );
}
