/**
 * A linearizability checker for a history of registers, in the manner of Porcupine (Wing & Gong's
 * search with Lowe's memoisation): one register per key (a job), writes set its value, reads
 * return it (null before any write). Keys are checked one by one — linearizability composes — so
 * each search stays small. An operation whose outcome is unknown (a write that timed out or
 * failed with a 5xx that may have committed) has no return: it may take effect at any point after
 * its call, or never (linearized last, it changes nothing anyone saw). Such a write whose value no
 * read returned is left out before the search: with or without it the same histories are
 * linearizable (where it would sit, no read saw its value), and each one left out halves nothing
 * less than the orders to try.
 */

/** One completed or pending operation on a register. */
export interface RegisterOp {
  key: string;
  kind: 'write' | 'read';
  /** The value written, or the value read (null: the register was empty). */
  value: string | null;
  /** When the call was issued and when its answer arrived (any monotonic clock); Infinity: never answered. */
  call: number;
  ret: number;
}

/** The verdict for one key. */
export interface KeyVerdict {
  key: string;
  ops: number;
  /** true: linearizable; false: not; 'unknown': the search hit its budget. */
  linearizable: boolean | 'unknown';
}

export interface LinearizabilityResult {
  keys: number;
  ops: number;
  violations: KeyVerdict[];
  unknown: KeyVerdict[];
}

/** States explored per key before giving up with 'unknown'. */
const DEFAULT_BUDGET = 200_000;

/** Checks every key's history; the keys with a violation (or an unfinished search) are listed. */
export function checkRegisters(history: readonly RegisterOp[], budget = DEFAULT_BUDGET): LinearizabilityResult {
  const byKey = new Map<string, RegisterOp[]>();
  for (const op of history) {
    let ops = byKey.get(op.key);
    if (!ops) byKey.set(op.key, (ops = []));
    ops.push(op);
  }
  const violations: KeyVerdict[] = [];
  const unknown: KeyVerdict[] = [];
  for (const [key, ops] of byKey) {
    const linearizable = checkRegister(ops, budget);
    if (linearizable === false) violations.push({ key, ops: ops.length, linearizable });
    else if (linearizable === 'unknown') unknown.push({ key, ops: ops.length, linearizable });
  }
  return { keys: byKey.size, ops: history.length, violations, unknown };
}

interface Entry {
  op: number;
  isCall: boolean;
  time: number;
  match: Entry | null;
  prev: Entry | null;
  next: Entry | null;
}

/** Whether one register's operations are linearizable (Porcupine's checkSingle). */
export function checkRegister(all: readonly RegisterOp[], budget = DEFAULT_BUDGET): boolean | 'unknown' {
  const seenValues = new Set(all.filter((o) => o.kind === 'read').map((o) => o.value));
  const ops = all.filter((o) => !(o.kind === 'write' && o.ret === Infinity && !seenValues.has(o.value)));
  // Events in time order; at equal times calls come first (the operations overlap: more orders allowed).
  const events: Entry[] = [];
  ops.forEach((o, i) => {
    const call: Entry = { op: i, isCall: true, time: o.call, match: null, prev: null, next: null };
    const ret: Entry = { op: i, isCall: false, time: o.ret, match: call, prev: null, next: null };
    call.match = ret;
    events.push(call, ret);
  });
  events.sort((a, b) => a.time - b.time || (a.isCall === b.isCall ? a.op - b.op : a.isCall ? -1 : 1));
  const head: Entry = { op: -1, isCall: false, time: -Infinity, match: null, prev: null, next: null };
  let last = head;
  for (const e of events) {
    last.next = e;
    e.prev = last;
    last = e;
  }
  const lift = (e: Entry): void => {
    e.prev!.next = e.next;
    if (e.next) e.next.prev = e.prev;
    const m = e.match!;
    m.prev!.next = m.next;
    if (m.next) m.next.prev = m.prev;
  };
  const unlift = (e: Entry): void => {
    const m = e.match!;
    m.prev!.next = m;
    if (m.next) m.next.prev = m;
    e.prev!.next = e;
    if (e.next) e.next.prev = e;
  };

  let state: string | null = null;
  let linearized = 0n;
  const seen = new Set<string>();
  const stack: { entry: Entry; state: string | null }[] = [];
  let entry = head.next;
  let explored = 0;
  while (head.next !== null) {
    if (entry!.isCall) {
      const op = ops[entry!.op]!;
      const ok = op.kind === 'write' || op.value === state;
      if (ok) {
        const nextState: string | null = op.kind === 'write' ? op.value : state;
        const nextLinearized = linearized | (1n << BigInt(entry!.op));
        const key = `${nextLinearized.toString(36)}|${nextState === null ? '\u0000' : nextState}`;
        if (!seen.has(key)) {
          if (++explored > budget) return 'unknown';
          seen.add(key);
          stack.push({ entry: entry!, state });
          state = nextState;
          linearized = nextLinearized;
          lift(entry!);
          entry = head.next;
          continue;
        }
      }
      entry = entry!.next;
    } else {
      // A return reached with its call not linearized: undo the last choice and try the next.
      const top = stack.pop();
      if (!top) return false;
      state = top.state;
      linearized &= ~(1n << BigInt(top.entry.op));
      unlift(top.entry);
      entry = top.entry.next;
    }
  }
  return true;
}
