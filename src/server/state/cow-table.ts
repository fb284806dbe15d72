/**
 * Copy-on-write tables with cheap point-in-time snapshots. Writers replace values (never mutate
 * them); when a snapshot is alive, the first write to a key after it records the key's old value
 * in that snapshot's overlay. A snapshot reads its own overlay, then the overlays of newer
 * snapshots, then the live table — so taking a snapshot is O(1) and a write costs O(1) extra.
 *
 * The store keeps only a weak reference to the newest snapshot: once no reader holds any
 * snapshot, overlays are garbage collected and writes stop recording.
 */

const ABSENT = Symbol('absent');
type Slot = unknown;

/** One point in time shared by every table of a store; holds each table's overlay. */
export class Epoch {
  readonly overlays = new Map<string, Map<unknown, Slot>>();
  newer: Epoch | null = null;
  constructor(readonly seq: number) {}

  overlay(table: string): Map<unknown, Slot> {
    let m = this.overlays.get(table);
    if (!m) {
      m = new Map();
      this.overlays.set(table, m);
    }
    return m;
  }
}

/** The clock of epochs: one per store; tables ask it where to record old values. */
export class EpochClock {
  private seq = 0;
  private newest: WeakRef<Epoch> | null = null;

  /** Starts a new epoch (a snapshot); the previous newest links to it. */
  begin(): Epoch {
    const e = new Epoch(++this.seq);
    const prev = this.newest?.deref();
    if (prev) prev.newer = e;
    this.newest = new WeakRef(e);
    return e;
  }

  /** The newest epoch still referenced by a snapshot, if any. */
  live(): Epoch | undefined {
    return this.newest?.deref();
  }

  /** The sequence number of the newest epoch ever begun. */
  current(): number {
    return this.seq;
  }
}

/** A map whose values are immutable and whose history is visible to snapshots. */
export class CowTable<K, V> {
  private readonly live = new Map<K, V>();

  constructor(
    readonly name: string,
    private readonly clock: EpochClock,
  ) {}

  get(key: K): V | undefined {
    return this.live.get(key);
  }

  has(key: K): boolean {
    return this.live.has(key);
  }

  get size(): number {
    return this.live.size;
  }

  set(key: K, value: V): void {
    this.remember(key);
    this.live.set(key, value);
  }

  delete(key: K): void {
    if (!this.live.has(key)) return;
    this.remember(key);
    this.live.delete(key);
  }

  values(): IterableIterator<V> {
    return this.live.values();
  }

  entries(): IterableIterator<[K, V]> {
    return this.live.entries();
  }

  keys(): IterableIterator<K> {
    return this.live.keys();
  }

  /** Removes everything without recording history (restore from a snapshot only). */
  clearForRestore(): void {
    this.live.clear();
  }

  /** The value of key as of epoch e. */
  getAt(e: Epoch, key: K): V | undefined {
    for (let cur: Epoch | null = e; cur; cur = cur.newer) {
      const m = cur.overlays.get(this.name);
      if (m && m.has(key)) {
        const v = m.get(key);
        return v === ABSENT ? undefined : (v as V);
      }
    }
    return this.live.get(key);
  }

  /** Every value as of epoch e. */
  *valuesAt(e: Epoch): Generator<V> {
    const seen = new Set<K>();
    for (let cur: Epoch | null = e; cur; cur = cur.newer) {
      const m = cur.overlays.get(this.name);
      if (!m) continue;
      for (const [k, v] of m) {
        if (seen.has(k as K)) continue;
        seen.add(k as K);
        if (v !== ABSENT) yield v as V;
      }
    }
    for (const [k, v] of this.live) if (!seen.has(k)) yield v;
  }

  private remember(key: K): void {
    const e = this.clock.live();
    if (!e) return;
    const m = e.overlay(this.name);
    if (!m.has(key)) m.set(key, this.live.has(key) ? this.live.get(key) : ABSENT);
  }
}

/** A set of ids stamped with the epoch it may be mutated in. */
interface IdSet {
  epoch: number;
  ids: Set<string>;
}

const EMPTY: ReadonlySet<string> = new Set();

/**
 * A secondary index key → set of ids (allocs by node, evals by job, …). A set is mutated in
 * place within one epoch and cloned on its first change after a snapshot.
 */
export class CowIndex {
  private readonly table: CowTable<string, IdSet>;

  constructor(
    name: string,
    private readonly clock: EpochClock,
  ) {
    this.table = new CowTable(name, clock);
  }

  add(key: string, id: string): void {
    this.writable(key).add(id);
  }

  remove(key: string, id: string): void {
    const cur = this.table.get(key);
    if (!cur || !cur.ids.has(id)) return;
    const ids = this.writable(key);
    ids.delete(id);
    if (ids.size === 0) this.table.delete(key);
  }

  get(key: string): ReadonlySet<string> {
    return this.table.get(key)?.ids ?? EMPTY;
  }

  getAt(e: Epoch, key: string): ReadonlySet<string> {
    return this.table.getAt(e, key)?.ids ?? EMPTY;
  }

  clearForRestore(): void {
    this.table.clearForRestore();
  }

  private writable(key: string): Set<string> {
    const cur = this.table.get(key);
    const seq = this.clock.current();
    if (cur && (cur.epoch === seq || !this.clock.live())) {
      cur.epoch = seq;
      return cur.ids;
    }
    const next: IdSet = { epoch: seq, ids: cur ? new Set(cur.ids) : new Set() };
    this.table.set(key, next);
    return next.ids;
  }
}
