/**
 * One etcd watch on its own gRPC stream, in place of the etcd3 client's watch layer.
 *
 * Why not `client.watch()`: the etcd3 client multiplexes every watcher of a client on one
 * stream and looks each response's watch ID up in its list; a response it cannot place
 * (e.g. for a watcher canceled while the stream reconnected after an etcd restart) makes it
 * throw `ClientRuntimeError: Failed to find watcher for IWatchResponse` inside the stream's
 * 'data' callback (lib/watch.js, WatchManager.handleResponse), where nothing can catch it: the
 * process dies (issue 33, all three servers at once). Its reconnect also replays a watch from
 * the start revision it was first created with, so old events arrive again after newer reads.
 *
 * Here a watch is one stream with one watcher on it: nothing to look up, and every failure —
 * a stream error or end, a cancel from etcd (a compacted start revision), a response that does
 * not parse, a throw in the owner's callback — ends the watch exactly once through `onEnd`. A
 * watch never reconnects by itself: its owner reads afresh and opens a new one from the
 * revision after that read, so events come strictly after what the owner already knows.
 */
import type { Etcd3, IDuplexStream, IEvent, IKeyValue, IWatchRequest, IWatchResponse } from 'etcd3';
import { Range } from 'etcd3';
import { CaravanError } from '../../structs/caravan-error.js';

/** What a watch covers: one key, or every key under a prefix. */
export type WatchRange = { key: string } | { prefix: string };

/** One change in etcd's history, as a watch delivers it. */
export interface WatchEvent {
  kind: 'put' | 'delete';
  kv: IKeyValue;
}

/** The stream a watch runs on (etcd's Watch RPC); tests pass a fake. */
export type WatchStream = IDuplexStream<IWatchRequest, IWatchResponse>;

export interface EtcdWatchOptions {
  range: WatchRange;
  /** The first revision delivered (the revision after the owner's read). */
  startRevision: string;
  /** Only puts (e.g. the log's entry keys, which are deleted only by compaction). */
  putsOnly?: boolean;
  /** Events of one revision batch, in revision order, with the response header's revision. */
  onEvents(events: WatchEvent[], revision: string): void;
  /** Called once when the watch ends for any reason other than cancel() (see the file comment). */
  onEnd(err: CaravanError<'ETCD_WATCH_ENDED'>): void;
}

/** How long etcd may take to confirm a watch before open() gives up (ms). */
const CREATE_TIMEOUT_MS = 5000;

/** A watch on its own stream (see the file comment). */
export class EtcdWatch {
  private ended = false;
  private created = false;
  private readonly label: string;

  private constructor(
    private readonly stream: WatchStream,
    private readonly o: EtcdWatchOptions,
  ) {
    this.label = 'key' in o.range ? o.range.key : `${o.range.prefix}*`;
  }

  /**
   * Opens a watch on a new stream of `client` and resolves once etcd confirmed it; rejects
   * (ETCD_WATCH_ENDED) if etcd refuses it (a compacted start revision) or is unreachable.
   */
  static async open(client: Etcd3, o: EtcdWatchOptions): Promise<EtcdWatch> {
    return EtcdWatch.openOn(await client.watchClient.watch(), o);
  }

  /** open() on a given stream (tests drive a fake one). */
  static openOn(stream: WatchStream, o: EtcdWatchOptions): Promise<EtcdWatch> {
    const watch = new EtcdWatch(stream, o);
    return watch.begin();
  }

  /** Ends the watch without calling onEnd; idempotent. */
  cancel(): void {
    if (this.ended) return;
    this.ended = true;
    this.close();
  }

  private begin(): Promise<EtcdWatch> {
    return new Promise<EtcdWatch>((resolve, reject) => {
      let settled = false;
      const timer = setTimeout(() => fail(this.error('etcd did not confirm the watch in time')), CREATE_TIMEOUT_MS);
      const fail = (err: CaravanError<'ETCD_WATCH_ENDED'>): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        this.ended = true;
        this.close();
        reject(err);
      };
      const opened = (): void => {
        settled = true;
        clearTimeout(timer);
        resolve(this);
      };
      // These listeners stay for the stream's life: a late 'error' on a stream nobody listens to
      // would be thrown by the EventEmitter and kill the process.
      this.stream.on('data', (res) => {
        try {
          if (!settled) {
            if (res.canceled) return fail(this.error(cancelReason(res)));
            if (res.created) {
              this.created = true;
              opened();
              // etcd sends a create confirmation alone, but accept events riding on it.
              if (res.events.length === 0) return;
            }
          }
          this.onResponse(res);
        } catch (err) {
          this.end(this.error(`handling a watch response failed: ${describe(err)}`, err));
        }
      });
      this.stream.on('error', (err) => (settled ? this.end(this.error(`stream failed: ${describe(err)}`, err)) : fail(this.error(`stream failed: ${describe(err)}`, err))));
      this.stream.on('end', () => (settled ? this.end(this.error('stream ended')) : fail(this.error('stream ended'))));
      try {
        this.stream.write({ create_request: this.createRequest() });
      } catch (err) {
        fail(this.error(`the watch request could not be sent: ${describe(err)}`, err));
      }
    });
  }

  private createRequest(): NonNullable<IWatchRequest['create_request']> {
    const r = this.o.range;
    const range = 'key' in r ? { key: Buffer.from(r.key) } : rangeOfPrefix(r.prefix);
    return {
      ...range,
      start_revision: this.o.startRevision,
      ...(this.o.putsOnly ? { filters: ['Nodelete' as const] } : {}),
    };
  }

  private onResponse(res: IWatchResponse): void {
    if (this.ended || !this.created) return;
    if (res.canceled) return this.end(this.error(cancelReason(res)));
    if (res.events.length === 0) return; // a progress notification
    const events = res.events.map(toEvent);
    this.o.onEvents(events, res.header.revision);
  }

  private end(err: CaravanError<'ETCD_WATCH_ENDED'>): void {
    if (this.ended) return;
    this.ended = true;
    this.close();
    this.o.onEnd(err);
  }

  private close(): void {
    try {
      // Ended first: the etcd3 client marks the member failed on an 'error' from a stream still
      // writable, and a cancel is reported as an error (CANCELLED) — every watch we drop would
      // otherwise reset the member's connections (other watches, lease keep-alives) and count
      // towards opening its circuit breaker.
      this.stream.end();
      this.stream.cancel();
    } catch {
      // already closed
    }
  }

  private error(reason: string, cause?: unknown): CaravanError<'ETCD_WATCH_ENDED'> {
    return new CaravanError('ETCD_WATCH_ENDED', { range: this.label, reason }, cause === undefined ? undefined : { cause });
  }
}

function rangeOfPrefix(prefix: string): { key: Buffer; range_end: Buffer } {
  const r = Range.prefix(prefix);
  return { key: r.start, range_end: r.end };
}

function toEvent(e: IEvent): WatchEvent {
  if (e.type !== 'Put' && e.type !== 'Delete') throw new Error(`unknown event type ${String(e.type)}`);
  return { kind: e.type === 'Put' ? 'put' : 'delete', kv: e.kv };
}

function cancelReason(res: IWatchResponse): string {
  const compacted = res.compact_revision && res.compact_revision !== '0' ? ` (history compacted at revision ${res.compact_revision})` : '';
  return `canceled by etcd${res.cancel_reason ? `: ${res.cancel_reason}` : ''}${compacted}`;
}

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
