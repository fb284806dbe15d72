/**
 * A task's stdout or stderr, followed live: a streamed read of /v1/client/fs/logs (plain text,
 * follow=true) from the start or the tail. A broken stream resumes at the byte it reached,
 * after a backoff; the view keeps the last 2 MB.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { apiFetch, withQuery } from '../lib/api.js';
import { seg, shortId } from '../lib/format.js';
import { href, navigate } from '../lib/router.js';
import { ErrorBox } from '../components/states.js';
import type { Allocation } from '../../../src/structs/alloc.js';
import { useLive } from '../lib/use-live.js';
import { useCan } from '../lib/session.js';
import { allocIsTerminal, allocWatch, execCapability } from './alloc-detail.js';

const KEEP_CHARS = 2 * 1024 * 1024;
const TAIL_BYTES = 64 * 1024;

/** Is the task finished for good (its allocation stopped, or the task dead and not restarting)? */
function taskIsDead(a: Allocation, task: string): boolean {
  return allocIsTerminal(a) || a.TaskStates?.[task]?.State === 'dead';
}

export function TaskLogsPage({ alloc, task, type, origin }: { alloc: string; task: string; type: 'stdout' | 'stderr'; origin: 'start' | 'end' }) {
  const allocLive = useLive<Allocation>(`/v1/allocation/${encodeURIComponent(alloc)}`, allocWatch(alloc));
  // A dead task's log is read once, not followed: nothing more will come. Until the allocation
  // is known the stream waits; if it cannot be read, the log is followed as before.
  const dead = allocLive.data ? taskIsDead(allocLive.data, task) : allocLive.error ? false : undefined;
  const follow = dead === undefined ? undefined : !dead;
  const can = useCan();
  const [text, setText] = useState('');
  const [error, setError] = useState<Error | undefined>(undefined);
  const [retryAt, setRetryAt] = useState<number | undefined>(undefined);
  const [state, setState] = useState<'connecting' | 'following' | 'reading' | 'ended'>('connecting');
  const pre = useRef<HTMLPreElement>(null);
  const stick = useRef(true);

  useEffect(() => {
    setText('');
    if (follow === undefined) return;
    let alive = true;
    let failures = 0;
    let received = 0;
    const ac = new AbortController();
    const run = async () => {
      while (alive) {
        setState('connecting');
        try {
          // First read: from the start, or the last TAIL_BYTES; a resumed read: where we were.
          const q = received > 0 ? { origin: 'start', offset: received } : origin === 'end' ? { origin: 'end', offset: TAIL_BYTES } : { origin: 'start', offset: 0 };
          const path = withQuery(`/v1/client/fs/logs/${encodeURIComponent(alloc)}`, { task, type, follow, plain: true, ...q });
          const res = await apiFetch(path, { signal: ac.signal });
          if (!res.body) throw new Error('the log stream has no body');
          setState(follow ? 'following' : 'reading');
          setError(undefined);
          setRetryAt(undefined);
          failures = 0;
          const reader = res.body.getReader();
          const dec = new TextDecoder();
          for (;;) {
            const { value, done } = await reader.read();
            if (done) break;
            if (received === 0 && origin === 'end') received = -1; // tail: offsets unknown until resumed
            if (received >= 0) received += value.byteLength;
            const chunk = dec.decode(value, { stream: true });
            setText((t) => {
              const next = t + chunk;
              return next.length > KEEP_CHARS ? next.slice(next.length - KEEP_CHARS) : next;
            });
          }
          setState('ended');
          return;
        } catch (err) {
          if (!alive) return;
          failures++;
          const wait = Math.min(30_000, 1000 * 2 ** Math.min(failures - 1, 5));
          setError(err as Error);
          setRetryAt(Date.now() + wait);
          // A tail read that broke restarts as a tail read (its byte offset is unknown).
          if (received < 0) {
            received = 0;
            setText('');
          }
          await new Promise((r) => setTimeout(r, wait));
        }
      }
    };
    void run();
    return () => {
      alive = false;
      ac.abort();
    };
  }, [alloc, task, type, origin, follow]);

  useEffect(() => {
    const el = pre.current;
    if (el && stick.current) el.scrollTop = el.scrollHeight;
  }, [text]);

  const base = `/allocations/${alloc}/${seg(task)}/logs`;
  const go = (t: string, o: string) => navigate(`${base}?type=${t}&origin=${o}`, true);
  return (
    <section aria-labelledby="logs-title">
      <p class="crumbs">
        <a href={href(`/allocations/${alloc}`)}>Allocation {shortId(alloc)}</a> / {task}
      </p>
      <div class="page-head">
        <h1 id="logs-title">Logs of {task}</h1>
        <div class="actions" role="group" aria-label="Log stream">
          <button type="button" aria-pressed={type === 'stdout'} onClick={() => go('stdout', origin)}>
            stdout
          </button>
          <button type="button" aria-pressed={type === 'stderr'} onClick={() => go('stderr', origin)}>
            stderr
          </button>
          <button type="button" aria-pressed={origin === 'start'} onClick={() => go(type, 'start')}>
            From start
          </button>
          <button type="button" aria-pressed={origin === 'end'} onClick={() => go(type, 'end')}>
            Tail
          </button>
          {dead === false && allocLive.data && can(execCapability(allocLive.data, task), allocLive.data.Namespace) && <a href={href(`/allocations/${alloc}/${seg(task)}/exec`)}>Exec</a>}
        </div>
      </div>
      {error && <ErrorBox error={error} retryAt={retryAt} />}
      <p class="muted" role="status" data-testid="log-state">
        {dead
          ? `Task ${task} is dead: this is all it wrote to ${type}.`
          : state === 'following'
            ? `Following ${type}…`
            : state === 'ended'
              ? `The ${type} stream ended.`
              : 'Connecting…'}
      </p>
      <pre
        class="log"
        ref={pre}
        tabIndex={0}
        aria-label={`${type} of task ${task}`}
        data-testid="log"
        onScroll={(e) => {
          const el = e.currentTarget;
          stick.current = el.scrollTop + el.clientHeight >= el.scrollHeight - 20;
        }}
      >
        {text || (state === 'following' ? `(no ${type} output yet)` : state === 'ended' ? `(no ${type} output)` : '')}
      </pre>
    </section>
  );
}
