/**
 * One subscriber of the etcd log: reads the committed entries from its next index (a range read
 * at one etcd revision), then watches the entry keys from the revision after it. Everything runs
 * on one promise chain, so entries reach the subscriber in index order without gaps; a gap, a
 * lost watch or an etcd outage starts the catch-up again from the next index, retrying every
 * RETRY_MS while etcd is away. Only LOG_COMPACTED (the next index was compacted) or LOG_CLOSED
 * end the subscription with onError.
 */
import type { Etcd3, IKeyValue, Watcher } from 'etcd3';
import { LogError, type LogEntry, type LogSubscriber } from './log-backend.js';
import type { EtcdLogKeys } from './etcd-log-keys.js';

const RETRY_MS = 250;

export interface EtcdLogSubscriptionOptions {
  client: Etcd3;
  keys: EtcdLogKeys;
  fromIndex: number;
  subscriber: LogSubscriber;
  /** Up to one page of entries from `from`, at `revision` (the latest when not given). */
  readPage(from: number, revision?: string): Promise<{ entries: LogEntry[]; revision: string; more: boolean }>;
  /** An entry key's value made whole (parts fetched at `revision`). */
  resolve(index: number, value: Buffer, revision: string): Promise<LogEntry>;
  compactedIndex(): Promise<number>;
  onEnd(sub: EtcdLogSubscription): void;
}

export class EtcdLogSubscription {
  private next: number;
  private stopped = false;
  private watcher: Watcher | null = null;
  /** Bumped whenever a watch is abandoned: events of an older one are ignored. */
  private generation = 0;
  private chain: Promise<void> = Promise.resolve();
  private retryTimer: NodeJS.Timeout | null = null;

  constructor(private readonly o: EtcdLogSubscriptionOptions) {
    this.next = o.fromIndex;
  }

  /** Begins delivery on a later turn, so the caller holds its unsubscribe first. */
  start(): void {
    this.enqueue(() => this.catchUp());
  }

  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.dropWatcher();
    this.o.onEnd(this);
  }

  /** Ends the subscription with an error (nothing is delivered after it). */
  fail(err: LogError): void {
    if (this.stopped) return;
    this.stop();
    this.o.subscriber.onError(err);
  }

  /** Entries this process just committed: delivered at once when they are the next ones. */
  offer(entries: LogEntry[]): void {
    this.enqueue(async () => this.deliver(entries));
  }

  private enqueue(step: () => Promise<void>): void {
    this.chain = this.chain.then(() => (this.stopped ? undefined : step())).catch(() => this.scheduleCatchUp());
  }

  private deliver(entries: LogEntry[]): void {
    if (this.stopped) return;
    const fresh = entries.filter((e) => e.index >= this.next);
    if (fresh.length === 0 || fresh[0]!.index !== this.next) return;
    this.next = fresh[fresh.length - 1]!.index + 1;
    this.o.subscriber.onEntries(fresh);
  }

  /** Range-reads from the next index, then watches from the revision after the read. */
  private async catchUp(): Promise<void> {
    this.dropWatcher();
    const compacted = await this.o.compactedIndex();
    if (this.next <= compacted) {
      this.fail(new LogError('LOG_COMPACTED', `entries up to ${compacted} were compacted; subscribed from ${this.next}`));
      return;
    }
    let revision: string | undefined;
    for (;;) {
      const page = await this.o.readPage(this.next, revision);
      revision = page.revision;
      this.deliver(page.entries);
      if (!page.more || this.stopped) break;
    }
    if (this.stopped) return;
    const generation = ++this.generation;
    const watcher = await this.o.client
      .watch()
      .prefix(this.o.keys.entries)
      .only('put')
      .startRevision(String(Number(revision) + 1))
      .create();
    if (this.stopped || generation !== this.generation) {
      void watcher.cancel().catch(() => undefined);
      return;
    }
    this.watcher = watcher;
    watcher.on('data', (res) => {
      if (generation !== this.generation) return;
      const puts = res.events.filter((e) => e.type === 'Put').map((e) => e.kv);
      if (puts.length > 0) this.enqueue(() => this.onPuts(puts, res.header.revision));
    });
    // The client reconnects a dropped watch by itself; a canceled one (e.g. its start revision
    // was compacted in etcd's history) is replaced by a fresh catch-up.
    watcher.on('error', () => {
      if (generation === this.generation) this.scheduleCatchUp();
    });
  }

  private async onPuts(kvs: IKeyValue[], revision: string): Promise<void> {
    const entries: LogEntry[] = [];
    for (const kv of kvs) {
      const index = this.o.keys.indexOf(kv.key.toString());
      if (!Number.isFinite(index) || index < this.next) continue;
      if (index !== this.next + entries.length) {
        // Something was missed (a reconnect skipped events): read it instead.
        this.deliver(entries);
        this.scheduleCatchUp(0);
        return;
      }
      entries.push(await this.o.resolve(index, kv.value, kv.mod_revision ?? revision));
    }
    this.deliver(entries);
  }

  private scheduleCatchUp(delayMs = RETRY_MS): void {
    if (this.stopped) return;
    this.dropWatcher();
    if (this.retryTimer) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      this.enqueue(() => this.catchUp());
    }, delayMs);
  }

  private dropWatcher(): void {
    this.generation++;
    const w = this.watcher;
    this.watcher = null;
    if (w) void w.cancel().catch(() => undefined);
  }
}
