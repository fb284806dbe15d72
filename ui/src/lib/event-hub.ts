/**
 * One event stream (`/v1/event/stream`, newline-delimited JSON) shared by every page: views
 * subscribe with a filter and refetch when a matching event arrives, so a change shows within
 * a round trip without polling. The stream starts once the page's first reads are in (a view
 * that mounts when another's data arrives counts too), from the highest index they answered;
 * every view whose read answered a lower one reads once more when the stream is up, so no
 * change between a read and the subscription is missed. (Starting from the lowest would replay
 * every event since: a job's read answers its own ModifyIndex, and after 50,000 allocations were
 * placed that is 50,000 allocation events for the browser to parse.) A broken
 * stream reconnects with exponential backoff (1 s … 30 s) from the last index it saw, and says
 * so in `status`.
 */
import type { StreamEvent } from '../../../src/server/events/event.js';
import { JsonFrameDecoder } from '../../../src/http/json-frame-decoder.js';
import { apiFetch, isForbidden } from './api.js';

/** What the banner shows about live updates. */
export interface HubStatus {
  state: 'idle' | 'connecting' | 'live' | 'retrying' | 'forbidden';
  /** The last failure, while retrying. */
  message?: string;
  /** When the next attempt starts (ms since epoch), while retrying. */
  retryAt?: number;
}

/** Called with the events of one batch, or with `null` after a reconnect (refetch everything). */
export type HubListener = (events: StreamEvent[] | null) => void;

const MAX_BACKOFF_MS = 30_000;
/** The longest the stream waits for the page's first reads before it starts anyway. */
const MAX_START_WAIT_MS = 2_000;

export class EventHub {
  private listeners = new Set<HubListener>();
  private statusListeners = new Set<(s: HubStatus) => void>();
  private lastIndex: number | undefined;
  /** Views that read before the stream first connected, with the lowest index they answered. */
  private earlyReads = new Map<HubListener, number>();
  /** First reads still in flight before the stream started, and when the first one reported. */
  private pendingFirstReads = 0;
  private firstReportAt: number | undefined;
  private startCheck: ReturnType<typeof setTimeout> | undefined;
  private started = false;
  private connectedOnce = false;
  private failures = 0;
  /** Bumped by restart(): a run of an older generation ends. */
  private generation = 0;
  private abort: AbortController | undefined;
  status: HubStatus = { state: 'idle' };

  constructor(private readonly path = '/v1/event/stream') {}

  /** Subscribes; returns the unsubscribe function. */
  subscribe(fn: HubListener): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  onStatus(fn: (s: HubStatus) => void): () => void {
    this.statusListeners.add(fn);
    return () => this.statusListeners.delete(fn);
  }

  /**
   * A view (`listener`) read data at `index`: the stream (started on the first report) covers
   * what follows, and a view that read at an index below the stream's start reads again once
   * the stream is up.
   */
  reportIndex(index: number, listener?: HubListener): void {
    if (this.connectedOnce) return;
    this.lastIndex = Math.max(this.lastIndex ?? index, index);
    if (listener) this.earlyReads.set(listener, Math.min(this.earlyReads.get(listener) ?? index, index));
    this.firstReportAt ??= Date.now();
    this.scheduleStart();
  }

  /**
   * A view's first read begins: the stream waits for it (at most MAX_START_WAIT_MS after the
   * first report) to start from the newest index. Call the answer when the read ends.
   */
  holdStart(): () => void {
    if (this.started) return () => {};
    const generation = this.generation;
    this.pendingFirstReads++;
    let done = false;
    return () => {
      if (done || generation !== this.generation) return;
      done = true;
      this.pendingFirstReads--;
      this.scheduleStart();
    };
  }

  /**
   * Checks on the next task whether to start: by then the views that mount on the data just
   * read (rendered in a microtask) have begun their own first reads. Each first read's end
   * checks again, so the stream starts as soon as the last one is in.
   */
  private scheduleStart(): void {
    if (this.started || this.firstReportAt === undefined) return;
    clearTimeout(this.startCheck);
    this.startCheck = setTimeout(() => {
      this.startCheck = undefined;
      if (this.started) return;
      const waited = Date.now() - (this.firstReportAt ?? Date.now());
      if (this.pendingFirstReads > 0 && waited < MAX_START_WAIT_MS) {
        // A read that hangs does not hold the stream past the deadline.
        this.startCheck = setTimeout(() => this.startNow(), MAX_START_WAIT_MS - waited);
        return;
      }
      this.startNow();
    }, 0);
  }

  private startNow(): void {
    this.startCheck = undefined;
    if (this.started) return;
    this.started = true;
    void this.run();
  }

  stop(): void {
    this.abort?.abort();
  }

  /**
   * Starts over with the token now stored (after a sign-in or sign-out): the open stream was
   * authorized with the old one. The next view's read starts it again.
   */
  restart(): void {
    this.generation++;
    this.abort?.abort();
    this.started = false;
    this.connectedOnce = false;
    this.failures = 0;
    this.lastIndex = undefined;
    this.earlyReads.clear();
    this.pendingFirstReads = 0;
    this.firstReportAt = undefined;
    clearTimeout(this.startCheck);
    this.startCheck = undefined;
    this.setStatus({ state: 'idle' });
  }

  private setStatus(s: HubStatus): void {
    this.status = s;
    for (const fn of this.statusListeners) fn(s);
  }

  private emit(events: StreamEvent[] | null): void {
    for (const fn of [...this.listeners]) {
      try {
        fn(events);
      } catch (err) {
        console.error('event listener failed', err);
      }
    }
  }

  /** The views that read below the stream's first index `from` read again: the stream does not cover them. */
  private resyncEarlyReads(from: number): void {
    const behind = [...this.earlyReads].filter(([, index]) => index < from).map(([fn]) => fn);
    this.earlyReads.clear();
    for (const fn of behind) {
      if (!this.listeners.has(fn)) continue;
      try {
        fn(null);
      } catch (err) {
        console.error('event listener failed', err);
      }
    }
  }

  private async run(): Promise<void> {
    const generation = this.generation;
    for (;;) {
      this.setStatus({ state: 'connecting' });
      try {
        await this.readStream();
        throw new Error('the event stream ended');
      } catch (err) {
        if (generation !== this.generation) return;
        if ((err as Error).name === 'AbortError' && this.abort?.signal.aborted) return;
        // The token may not read the stream: retrying cannot help until it changes (restart()).
        if (isForbidden(err)) {
          this.setStatus({ state: 'forbidden', message: (err as Error).message });
          return;
        }
        this.failures++;
        const wait = Math.min(MAX_BACKOFF_MS, 1000 * 2 ** Math.min(this.failures - 1, 5));
        this.setStatus({ state: 'retrying', message: (err as Error).message, retryAt: Date.now() + wait });
        await new Promise((r) => setTimeout(r, wait));
        if (generation !== this.generation) return;
      }
    }
  }

  private async readStream(): Promise<void> {
    this.abort = new AbortController();
    const from = this.lastIndex ?? 0;
    const res = await apiFetch(`${this.path}?index=${from}&namespace=*`, { signal: this.abort.signal });
    if (!res.body) throw new Error('the event stream has no body');
    const reconnect = this.connectedOnce;
    this.connectedOnce = true;
    this.failures = 0;
    this.setStatus({ state: 'live' });
    // Events may have been missed while the stream was down: every view refetches once.
    if (reconnect) this.emit(null);
    else this.resyncEarlyReads(from);
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    // Frames come back to back, as Nomad's (`{…}{…}{}`), heartbeats included.
    const frames = new JsonFrameDecoder();
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      for (const frame of frames.pushParsed<{ Index?: number; Events?: StreamEvent[]; Error?: string }>(value)) {
        if (frame.Error) throw new Error(`event stream: ${frame.Error}`);
        if (frame.Index !== undefined && frame.Events) {
          this.lastIndex = frame.Index;
          this.emit(frame.Events);
        }
      }
    }
  }
}

/** The UI's one hub. */
export const hub = new EventHub();
