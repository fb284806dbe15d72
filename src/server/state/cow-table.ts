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

/** Something an undo log can put back: `undo(key, value)` reverses one recorded write. */
interface Undoable {
  undo(key: unknown, value: unknown): void;
}

/**
 * What one apply changed, as a flat list of (target, key, old value) records, newest last.
 * Replaying it backwards restores every table and index exactly, so no per-key dedupe (and no
 * map per table) is needed: a write costs three array slots.
 */
export class UndoLog {
  private readonly records: unknown[] = [];

  record(target: Undoable, key: unknown, value: unknown): void {
    this.records.push(target, key, value);
  }

  /** Puts back everything recorded, newest first. */
  rollback(): void {
    const r = this.records;
    for (let i = r.length - 3; i >= 0; i -= 3) (r[i] as Undoable).undo(r[i + 1], r[i + 2]);
    r.length = 0;
  }
}

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

  private txn: UndoLog | null = null;

  /**
   * Starts an undo log for one apply (StateStore.transact): every write records what to put
   * back. It is not an epoch of the snapshot chain, so readers never walk it; it counts as a
   * new epoch for current(), so objects copied before it are not mutated in place.
   */
  beginTxn(): UndoLog {
    ++this.seq;
    this.txn = new UndoLog();
    return this.txn;
  }

  /** Ends the undo log begun by beginTxn. */
  endTxn(): void {
    this.txn = null;
  }

  /** The undo log of the apply in progress, if any. */
  journal(): UndoLog | null {
    return this.txn;
  }

  /** The sequence number of the newest epoch ever begun. */
  current(): number {
    return this.seq;
  }
}

/** A map whose values are immutable and whose history is visible to snapshots. */
export class CowTable<K, V> implements Undoable {
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
    // Values are objects, never undefined: one read tells absent from present.
    const cur = this.live.get(key);
    this.remember(key, cur === undefined ? ABSENT : cur);
    this.live.set(key, value);
  }

  /** set() for a caller that has just read the key's current value (undefined: absent). */
  setKnown(key: K, value: V, current: V | undefined): void {
    this.remember(key, current === undefined ? ABSENT : current);
    this.live.set(key, value);
  }

  delete(key: K): void {
    const cur = this.live.get(key);
    if (cur === undefined) return;
    this.remember(key, cur);
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

  /** Undoes one recorded write (UndoLog.rollback). */
  undo(key: unknown, old: unknown): void {
    if (old === ABSENT) this.live.delete(key as K);
    else this.live.set(key as K, old as V);
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

  /** Records `old` (the key's value before this write; ABSENT if none) for undo and snapshots. */
  private remember(key: K, old: unknown): void {
    const e = this.clock.live();
    const j = this.clock.journal();
    if (!e && !j) return;
    j?.record(this, key, old);
    if (e) {
      const m = e.overlay(this.name);
      if (!m.has(key)) m.set(key, old);
    }
  }
}

const EMPTY: ReadonlySet<string> = new Set();

/** An index overlay's record of a key that had no members when the epoch began (CowIndex). */
const EMPTY_AT_EPOCH = Symbol('empty at epoch');

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
      const changes = cur.overlays.get(this.name)?.get(key) as Map<string, boolean> | typeof EMPTY_AT_EPOCH | undefined;
      if (!changes) continue;
      if (changes === EMPTY_AT_EPOCH) {
        // Empty when `cur` began: members are only what older epochs recorded as members.
        const members = new Set<string>();
        if (out && seen) for (const id of seen) if (out.has(id)) members.add(id);
        return members;
      }
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

  private remember(key: string, id: string, wasMember: boolean): void {
    this.clock.journal()?.record(wasMember ? this.undoRemove : this.undoAdd, key, id);
    const e = this.clock.live();
    if (!e) return;
    const overlay = e.overlay(this.name);
    let changes = overlay.get(key) as Map<string, boolean> | typeof EMPTY_AT_EPOCH | undefined;
    if (changes === EMPTY_AT_EPOCH) return;
    if (!changes) {
      // The first change of a key with no members since the epoch began: one mark says all
      // (a plan placing on 10,000 nodes with no allocations records 10,000 marks, not 10,000
      // maps of one member each; a new job's 10,000 allocations record one).
      if (!this.live.has(key)) {
        overlay.set(key, EMPTY_AT_EPOCH);
        return;
      }
      overlay.set(key, (changes = new Map()));
    }
    if (!changes.has(id)) changes.set(id, wasMember);
  }

  /** Undo records of an add and of a remove (UndoLog.rollback), without recording anew. */
  private readonly undoAdd: Undoable = {
    undo: (key, id) => {
      const ids = this.live.get(key as string);
      if (!ids) return;
      ids.delete(id as string);
      if (ids.size === 0) this.live.delete(key as string);
    },
  };

  private readonly undoRemove: Undoable = {
    undo: (key, id) => {
      let ids = this.live.get(key as string);
      if (!ids) this.live.set(key as string, (ids = new Set()));
      ids.add(id as string);
    },
  };
}
