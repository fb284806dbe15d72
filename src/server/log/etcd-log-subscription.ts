/**
 * One subscriber of the etcd log: reads the committed entries from its next index (a range read
 * at one etcd revision), then watches the entry keys from the revision after it. Everything runs
 * on one promise chain, so entries reach the subscriber in index order without gaps; a gap, a
 * lost watch or an etcd outage starts the catch-up again from the next index, retrying every
 * RETRY_MS while etcd is away. Only LOG_COMPACTED (the next index was compacted) or LOG_CLOSED
 * end the subscription with onError.
 */
import type { Etcd3, IKeyValue } from 'etcd3';
import { EtcdWatch } from '../etcd/etcd-watch.js';
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
  /** Opens the entries' watch (tests substitute one whose stream they drive). Default EtcdWatch.open. */
  openWatch?: typeof EtcdWatch.open;
}

export class EtcdLogSubscription {
  private next: number;
  private stopped = false;
  private watcher: EtcdWatch | null = null;
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
    // A watch on its own stream (EtcdWatch, not the client's shared watch layer, which can
    // throw where nothing catches it); when it ends for any reason the catch-up starts again.
    const open = this.o.openWatch ?? ((client, opts) => EtcdWatch.open(client, opts));
    const watch = await open(this.o.client, {
      range: { prefix: this.o.keys.entries },
      putsOnly: true,
      startRevision: String(Number(revision) + 1),
      onEvents: (events, rev) => {
        if (generation !== this.generation) return;
        const puts = events.filter((e) => e.kind === 'put').map((e) => e.kv);
        if (puts.length > 0) this.enqueue(() => this.onPuts(puts, rev));
      },
      onEnd: () => {
        if (generation === this.generation) this.scheduleCatchUp();
      },
    });
    if (this.stopped || generation !== this.generation) {
      watch.cancel();
      return;
    }
    this.watcher = watch;
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
    w?.cancel();
  }
}
