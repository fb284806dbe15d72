/**
 * What a fault run's recorded history must satisfy, apart from linearizability
 * (register-linearizability.ts): no two leaders at once, and every acknowledged write present on
 * every server with one value.
 */
import type { RegisterOp } from './register-linearizability.js';
import type { LeaderObservation } from './fault-workload.js';

/** Two leader claims that cannot both hold: two servers in one term, or an older term claimed after a newer one was. */
export interface LeaderConflict {
  first: LeaderObservation;
  second: LeaderObservation;
  why: string;
}

/**
 * Terms are etcd create revisions: a later election has a larger one, and a server leads only
 * while its lease is confirmed, so once a newer term was seen leading (its answer received), no
 * server may answer that it leads in an older term in a request sent after that. Two servers
 * claiming the same term is a conflict whenever.
 */
export function leaderConflicts(observations: readonly LeaderObservation[]): LeaderConflict[] {
  const claims = observations.filter((o) => o.leader && o.term !== '');
  const out: LeaderConflict[] = [];
  const holder = new Map<string, LeaderObservation>();
  for (const c of claims) {
    const other = holder.get(c.term);
    if (other && other.server !== c.server) out.push({ first: other, second: c, why: `${other.server} and ${c.server} both lead term ${c.term}` });
    else holder.set(c.term, c);
  }
  // By answer time: the newest term seen leading so far, against each later-sent claim.
  const byRet = [...claims].sort((a, b) => a.ret - b.ret);
  const bySend = [...claims].sort((a, b) => a.call - b.call);
  let newest: LeaderObservation | null = null;
  let i = 0;
  for (const c of bySend) {
    while (i < byRet.length && byRet[i]!.ret < c.call) {
      const o = byRet[i++]!;
      if (!newest || BigInt(o.term) > BigInt(newest.term)) newest = o;
    }
    if (newest && BigInt(c.term) < BigInt(newest.term)) {
      out.push({ first: newest, second: c, why: `${c.server} claimed term ${c.term} after ${newest.server} was seen leading term ${newest.term}` });
    }
  }
  return out;
}

/** A key whose final value is wrong on some server. */
export interface ValueProblem {
  key: string;
  server: string;
  value: string | null;
  /** The values it could have been. */
  expected: string[];
}

/**
 * The values a key may end with: a write (acknowledged or unknown) that no acknowledged write
 * began after. With no acknowledged write, null (never registered) is possible too.
 */
export function possibleFinalValues(ops: readonly RegisterOp[], key: string): Set<string | null> {
  const writes = ops.filter((o) => o.key === key && o.kind === 'write');
  const acked = writes.filter((o) => o.ret !== Infinity);
  const out = new Set<string | null>();
  for (const w of writes) if (!acked.some((a) => a.call > w.ret)) out.add(w.value);
  if (acked.length === 0) out.add(null);
  return out;
}

/**
 * Lost: a server's final value is not one the key may end with (an acknowledged write missing or
 * overwritten by an older one). Divergent: servers answer different values for one key.
 */
export function checkFinalValues(ops: readonly RegisterOp[], finals: ReadonlyMap<string, ReadonlyMap<string, string | null>>): { lost: ValueProblem[]; divergent: string[] } {
  const lost: ValueProblem[] = [];
  const divergent: string[] = [];
  for (const [key, byServer] of finals) {
    const possible = possibleFinalValues(ops, key);
    for (const [server, value] of byServer) {
      if (!possible.has(value)) lost.push({ key, server, value, expected: [...possible].map(String) });
    }
    if (new Set(byServer.values()).size > 1) divergent.push(key);
  }
  return { lost, divergent };
}
