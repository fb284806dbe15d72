/** Loading, empty and error states, and the live-update indicator. */
import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { hub, type HubStatus } from '../lib/event-hub.js';
import type { LiveState } from '../lib/use-live.js';
import { isForbidden, onForbidden, wasForbidden } from '../lib/api.js';
import { href } from '../lib/router.js';
import { useSession } from '../lib/session.js';

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

/** A 403: who the UI is signed in as, and the way to the sign-in page — no retry countdown. */
export function ForbiddenBox({ error }: { error: Error }) {
  const session = useSession();
  const who = session.state === 'signed-in' ? (session.anonymous ? undefined : session.token.Name || session.token.AccessorID) : undefined;
  return (
    <div class="state error" role="alert" data-testid="forbidden">
      <strong>Not authorized.</strong> {error.message.replace(/^403 Forbidden: /, '')}:{' '}
      {who === undefined ? 'this agent has ACLs enabled and no token is signed in' : `the token "${who}" may not read this`}.{' '}
      <a href={href('/settings/tokens')}>{who === undefined ? 'Sign in with a token' : 'Use another token'}</a>
    </div>
  );
}

export function ErrorBox({ error, retryAt }: { error: Error; retryAt?: number | undefined }) {
  useSecondTick(retryAt !== undefined);
  if (isForbidden(error)) return <ForbiddenBox error={error} />;
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

/**
 * The live-update state in the header. A refused read or stream wins over the stream's own
 * state: an open stream that carries none of the events the token may not see is not "Live".
 */
export function LiveIndicator() {
  const [status, setStatus] = useState<HubStatus>(hub.status);
  const [refused, setRefused] = useState(wasForbidden());
  const session = useSession();
  useEffect(() => {
    setStatus(hub.status);
    return hub.onStatus(setStatus);
  }, []);
  useEffect(() => {
    // A refusal that came between the render and this subscription is not missed.
    setRefused(wasForbidden());
    return onForbidden(setRefused);
  }, []);
  useSecondTick(status.state === 'retrying');
  const signedOut = session.state === 'signed-in' && session.anonymous;
  if (refused || status.state === 'forbidden' || session.state === 'error') {
    const label = signedOut ? 'Not signed in' : session.state === 'error' ? 'Token refused' : 'Permission denied';
    return (
      <a class="live live-forbidden" href={href('/settings/tokens')} data-testid="live-state" title={`${label}: live updates need a token that may read this`}>
        <span class="dot" aria-hidden="true" />
        {label}
      </a>
    );
  }
  const label =
    status.state === 'live'
      ? 'Live'
      : status.state === 'retrying'
        ? `Live updates lost (${status.message ?? 'error'}); retrying in ${secondsUntil(status.retryAt)}s`
        : status.state === 'connecting'
          ? 'Connecting…'
          : 'Idle';
  return (
    <span class={`live live-${status.state}`} role="status" aria-live="polite" title={label} data-testid="live-state">
      <span class="dot" aria-hidden="true" />
      {label}
    </span>
  );
}
