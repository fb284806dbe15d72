/**
 * Blocking queries as Nomad runs them: with `?index=N`, hold the request until one of the
 * watched tables moves past N or the wait (plus up to 1/16 of it as jitter, so that many
 * watchers do not all return together) runs out, then run the read once against the current
 * state. The answer's index is never 0, so a client can always block on it next time.
 */
import type { Clock, RandomSource } from '../time/clock.js';
import type { ServerApi, Table } from '../server/server-api.js';
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
 * `signal` (the client went away) stops waiting early. `read` may compute its own index (e.g.
 * a job's ModifyIndex); by default the tables' index is used.
 */
export async function blockingQuery<T>(
  deps: BlockingDeps,
  tables: Table[],
  opts: QueryOptions,
  read: () => T,
  signal?: AbortSignal,
): Promise<IndexedResult<T>> {
  if (opts.index > 0) {
    const jitter = Math.floor(deps.random() * (opts.waitMs / JITTER_FRACTION));
    const deadline = deps.clock.now() + opts.waitMs + jitter;
    while (tablesIndex(deps.server, tables) <= opts.index && !signal?.aborted) {
      const remaining = deadline - deps.clock.now();
      if (remaining <= 0) break;
      await deps.server.waitForChange(tables, opts.index, remaining, signal);
    }
  }
  return { index: tablesIndex(deps.server, tables), value: read() };
}
