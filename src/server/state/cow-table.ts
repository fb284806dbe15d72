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

  private txn: Epoch | null = null;

  /**
   * Starts an undo journal for one apply (StateStore.transact). It records old values like a
   * snapshot epoch but is not linked into the snapshot chain: snapshots taken before it never
   * walk through it, so per-apply journals cost readers nothing.
   */
  beginTxn(): Epoch {
    this.txn = new Epoch(++this.seq);
    return this.txn;
  }

  /** Ends the undo journal begun by beginTxn. */
  endTxn(): void {
    this.txn = null;
  }

  /** The undo journal of the apply in progress, if any. */
  journal(): Epoch | null {
    return this.txn;
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

  /**
   * Puts back the values every key had when epoch e began, from e's overlay (undoing a failed
   * write). Only exact when e is the newest epoch and nothing began after it.
   */
  rollbackTo(e: Epoch): void {
    const m = e.overlays.get(this.name);
    if (!m) return;
    for (const [k, v] of m) {
      if (v === ABSENT) this.live.delete(k as K);
      else this.live.set(k as K, v as V);
    }
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
    const j = this.clock.journal();
    if (!e && !j) return;
    const old = this.live.has(key) ? this.live.get(key) : ABSENT;
    for (const target of [e, j]) {
      if (!target) continue;
      const m = target.overlay(this.name);
      if (!m.has(key)) m.set(key, old);
    }
  }
}

const EMPTY: ReadonlySet<string> = new Set();

/**
 * A secondary index key → set of ids (allocs by node, evals by job, …). The live sets are
 * mutated in place; while a snapshot is alive, the first change of an (key, id) pair records
 * whether the id was a member before, in the newest epoch's overlay. A reader at an older epoch
 * rebuilds its set from the live one and those records. Writes stay O(1) however large a set
 * grows, and only the (rare) reads of old epochs pay for the history.
 */
export class CowIndex {
  private readonly live = new Map<string, Set<string>>();

  constructor(
    private readonly name: string,
    private readonly clock: EpochClock,
  ) {}

  add(key: string, id: string): void {
    let ids = this.live.get(key);
    if (ids?.has(id)) return;
    this.remember(key, id, false);
    if (!ids) this.live.set(key, (ids = new Set()));
    ids.add(id);
  }

  remove(key: string, id: string): void {
    const ids = this.live.get(key);
    if (!ids || !ids.has(id)) return;
    this.remember(key, id, true);
    ids.delete(id);
    if (ids.size === 0) this.live.delete(key);
  }

  /** The live set; read it before the next write (it is mutated in place). */
  get(key: string): ReadonlySet<string> {
    return this.live.get(key) ?? EMPTY;
  }

  /** The set as of epoch e; read it before the next write (it may be the live set). */
  getAt(e: Epoch, key: string): ReadonlySet<string> {
    const ids = this.live.get(key);
    let out: Set<string> | null = null;
    let seen: Set<string> | null = null;
    for (let cur: Epoch | null = e; cur; cur = cur.newer) {
      const changes = cur.overlays.get(this.name)?.get(key) as Map<string, boolean> | undefined;
      if (!changes) continue;
      out ??= new Set(ids);
      seen ??= new Set();
      for (const [id, wasMember] of changes) {
        if (seen.has(id)) continue;
        seen.add(id);
        if (wasMember) out.add(id);
        else out.delete(id);
      }
    }
    return out ?? ids ?? EMPTY;
  }

  clearForRestore(): void {
    this.live.clear();
  }

  /** Puts back the memberships the index had when epoch e began (see CowTable.rollbackTo). */
  rollbackTo(e: Epoch): void {
    const overlay = e.overlays.get(this.name);
    if (!overlay) return;
    for (const [key, changes] of overlay) {
      for (const [id, wasMember] of changes as Map<string, boolean>) {
        let ids = this.live.get(key as string);
        if (wasMember) {
          if (!ids) this.live.set(key as string, (ids = new Set()));
          ids.add(id);
        } else if (ids) {
          ids.delete(id);
          if (ids.size === 0) this.live.delete(key as string);
        }
      }
    }
  }

  private remember(key: string, id: string, wasMember: boolean): void {
    for (const target of [this.clock.live(), this.clock.journal()]) {
      if (!target) continue;
      const overlay = target.overlay(this.name);
      let changes = overlay.get(key) as Map<string, boolean> | undefined;
      if (!changes) overlay.set(key, (changes = new Map()));
      if (!changes.has(id)) changes.set(id, wasMember);
    }
  }
}
