/**
 * One event stream (`/v1/event/stream`, newline-delimited JSON) shared by every page: views
 * subscribe with a filter and refetch when a matching event arrives, so a change shows within
 * a round trip without polling. The stream starts from the lowest index a view has read, so no
 * change between a read and the subscription is missed; a broken stream reconnects with
 * exponential backoff (1 s … 30 s) from the last index it saw, and says so in `status`.
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

export class EventHub {
  private listeners = new Set<HubListener>();
  private statusListeners = new Set<(s: HubStatus) => void>();
  private lastIndex: number | undefined;
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

  /** A view read data at `index`: the stream (started on the first report) covers what follows. */
  reportIndex(index: number): void {
    if (!this.started) {
      this.lastIndex = this.lastIndex === undefined ? index : Math.min(this.lastIndex, index);
      this.started = true;
      // Let the other first reads of the page report too before choosing where to start.
      setTimeout(() => void this.run(), 0);
    } else if (this.status.state !== 'live' && !this.connectedOnce) {
      this.lastIndex = Math.min(this.lastIndex ?? index, index);
    }
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
    const res = await apiFetch(`${this.path}?index=${this.lastIndex ?? 0}&namespace=*`, { signal: this.abort.signal });
    if (!res.body) throw new Error('the event stream has no body');
    const reconnect = this.connectedOnce;
    this.connectedOnce = true;
    this.failures = 0;
    this.setStatus({ state: 'live' });
    // Events may have been missed while the stream was down: every view refetches once.
    if (reconnect) this.emit(null);
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
