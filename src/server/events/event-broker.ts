/**
 * The event broker: keeps the events of the last applied commands in a bounded ring buffer and
 * serves subscriptions that replay from an index and then follow new events. A subscriber that
 * falls further behind than the buffer holds is closed with EventStreamError.
 *
 * The buffer is bounded twice: by log indexes (batches) and by events. One plan of a thousand
 * placements is one index with a thousand events, each holding its allocation: bounded by
 * indexes alone, the buffer of a server placing a million allocations kept every one of them
 * (and every superseded version) alive.
 */
import { CaravanError, type CaravanErrorOptions } from '../../structs/caravan-error.js';
import type { EventBatch, EventTopic, StreamEvent } from './event.js';

/** The most events the buffer keeps unless told otherwise (see the file comment). */
export const DEFAULT_MAX_EVENTS = 32_768;

/** Why a subscription ended abnormally. */
export class EventStreamError extends CaravanError<'SUBSCRIBER_TOO_SLOW' | 'BROKER_CLOSED'> {
  constructor(code: 'SUBSCRIBER_TOO_SLOW' | 'BROKER_CLOSED', reason: string, options?: CaravanErrorOptions) {
    super(code, { reason }, options);
    this.name = 'EventStreamError';
  }
}

/** What to subscribe to: topics → keys ("*" = all), from an index, in a namespace ("*" = all). */
export interface SubscribeRequest {
  index?: number;
  topics?: Map<EventTopic | '*', string[]>;
  namespace?: string;
  signal?: AbortSignal;
}

interface Subscriber {
  cursor: number; // position in the global batch sequence
  wake: (() => void) | null;
  closed: EventStreamError | null;
}

/** A bounded buffer of event batches with replaying, following subscriptions. */
export class EventBroker {
  private readonly ring: EventBatch[] = [];
  /** Global sequence number of ring[0]. */
  private base = 0;
  private readonly subs = new Set<Subscriber>();
  private closedFlag = false;
  /** Events in the ring. */
  private events = 0;

  /**
   * @param capacity the most batches (log indexes) kept.
   * @param maxEvents the most events kept; the newest batch is kept whatever its size.
   */
  constructor(
    private readonly capacity = 4096,
    private readonly maxEvents = DEFAULT_MAX_EVENTS,
  ) {}

  /** Publishes the events of one log index (no-op for an empty list); node secrets are stripped. */
  publish(index: number, events: StreamEvent[]): void {
    if (events.length === 0 || this.closedFlag) return;
    this.ring.push({ Index: index, Events: events });
    this.events += events.length;
    let dropped = false;
    while (this.ring.length > 1 && (this.ring.length > this.capacity || this.events > this.maxEvents)) {
      this.events -= this.ring.shift()!.Events.length;
      this.base++;
      dropped = true;
    }
    if (dropped) {
      for (const s of this.subs) {
        if (s.cursor < this.base) this.fail(s, new EventStreamError('SUBSCRIBER_TOO_SLOW', 'subscriber fell behind the event buffer'));
      }
    }
    for (const s of this.subs) this.wakeUp(s);
  }

  /** Number of live subscriptions. */
  subscriberCount(): number {
    return this.subs.size;
  }

  /** Ends every subscription. */
  close(): void {
    this.closedFlag = true;
    for (const s of this.subs) this.fail(s, new EventStreamError('BROKER_CLOSED', 'event broker closed'));
  }

  /**
   * Subscribes: yields filtered batches with Index > req.index (the buffered ones first),
   * then follows. The subscription starts now (not at first next()). Ends when the signal
   * aborts; throws EventStreamError when the subscriber falls too far behind.
   */
  subscribe(req: SubscribeRequest = {}): AsyncIterable<EventBatch> {
    const after = req.index ?? 0;
    let start = this.ring.findIndex((b) => b.Index > after);
    if (start < 0) start = this.ring.length;
    const sub: Subscriber = { cursor: this.base + start, wake: null, closed: null };
    this.subs.add(sub);
    const onAbort = (): void => {
      this.subs.delete(sub);
      this.wakeUp(sub);
    };
    req.signal?.addEventListener('abort', onAbort, { once: true });
    return { [Symbol.asyncIterator]: () => this.follow(sub, req, onAbort) };
  }

  private async *follow(sub: Subscriber, req: SubscribeRequest, onAbort: () => void): AsyncGenerator<EventBatch> {
    try {
      for (;;) {
        if (req.signal?.aborted) return;
        if (sub.closed) {
          if (sub.closed.code === 'BROKER_CLOSED') return;
          throw sub.closed;
        }
        const pos = sub.cursor - this.base;
        if (pos < this.ring.length) {
          const batch = this.ring[pos]!;
          sub.cursor++;
          const events = batch.Events.filter((e) => matches(e, req));
          if (events.length > 0) yield { Index: batch.Index, Events: events };
          continue;
        }
        await new Promise<void>((resolve) => {
          sub.wake = resolve;
        });
      }
    } finally {
      req.signal?.removeEventListener('abort', onAbort);
      this.subs.delete(sub);
    }
  }

  private fail(s: Subscriber, err: EventStreamError): void {
    s.closed = err;
    this.wakeUp(s);
  }

  private wakeUp(s: Subscriber): void {
    const w = s.wake;
    s.wake = null;
    w?.();
  }
}

function matches(e: StreamEvent, req: SubscribeRequest): boolean {
  const ns = req.namespace ?? '*';
  if (ns !== '*' && e.Namespace !== '' && e.Namespace !== ns) return false;
  if (!req.topics || req.topics.size === 0) return true;
  const keys = req.topics.get(e.Topic) ?? req.topics.get('*');
  if (!keys) return false;
  if (keys.includes('*')) return true;
  return keys.includes(e.Key) || (e.FilterKeys ?? []).some((k) => keys.includes(k));
}
