/**
 * Blocking queries as Nomad runs them: with `?index=N`, hold the request until one of the
 * watched tables moves past N or the wait (plus up to 1/16 of it as jitter, so that many
 * watchers do not all return together) runs out, then run the read once against the current
 * state. The answer's index is never 0, so a client can always block on it next time.
 *
 * A query on one object (a job, a node, an allocation…) waits for that object, as Nomad does: its
 * answer's index is the object's ModifyIndex, and a change elsewhere in its table only makes the
 * server read it again — the request is answered once the object's own index passes N (or it is
 * gone, answered with the table's index), or the wait runs out. After a snapshot restore the
 * restored objects keep their own (older) indexes: such an answer is indexed at least at the
 * restore's log index, so a client blocked on an index the restore left behind is answered at
 * once and blocks next on an index that only moves forward.
 */
import type { Clock, RandomSource } from '../time/clock.js';
import type { ServerApi } from '../server/server-api.js';
import type { Table } from '../server/state/state-reader.js';
import type { QueryOptions } from './query-options.js';

/** Nomad divides the wait by this to bound the random extra time added to it. */
export const JITTER_FRACTION = 16;

/** What a blocking read needs besides the query: the server, time and randomness. */
export interface BlockingDeps {
  server: ServerApi;
  clock: Clock;
  random: RandomSource;
}

/** The result of a read and the index it reflects. */
export interface IndexedResult<T> {
  index: number;
  value: T;
}

/** The highest index among `tables` (at least 1). */
export function tablesIndex(server: ServerApi, tables: Table[]): number {
  let max = 0;
  for (const t of tables) max = Math.max(max, server.state.tableIndex(t));
  return Math.max(1, max);
}

/**
 * Runs `read` once the tables have moved past `opts.index` or the wait has expired; aborting
 * `signal` (the client went away) stops waiting early. With `indexOf` the read is of one object
 * and the answer's index is `indexOf(value)` (see the file comment); a read that throws (the
 * object does not exist) is indexed by its tables.
 */
export async function blockingQuery<T>(
  deps: BlockingDeps,
  tables: Table[],
  opts: QueryOptions,
  read: () => T,
  signal?: AbortSignal,
  indexOf?: (value: T) => number,
): Promise<IndexedResult<T>> {
  const jitter = Math.floor(deps.random() * (opts.waitMs / JITTER_FRACTION));
  const deadline = deps.clock.now() + opts.waitMs + jitter;
  const waitMore = (): boolean => opts.index > 0 && !signal?.aborted && deadline - deps.clock.now() > 0;
  if (!indexOf) {
    while (tablesIndex(deps.server, tables) <= opts.index && waitMore()) {
      await deps.server.waitForChange(tables, opts.index, deadline - deps.clock.now(), signal);
    }
    return { index: tablesIndex(deps.server, tables), value: read() };
  }
  for (;;) {
    const seen = tablesIndex(deps.server, tables);
    let result: IndexedResult<T> | undefined;
    try {
      const value = read();
      result = { index: Math.max(1, indexOf(value), deps.server.state.restoreIndex?.() ?? 0), value };
    } catch (err) {
      if (seen > opts.index || !waitMore()) throw err;
    }
    if (result && (result.index > opts.index || !waitMore())) return result;
    await deps.server.waitForChange(tables, Math.max(seen, opts.index), deadline - deps.clock.now(), signal);
  }
}
