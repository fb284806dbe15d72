/**
 * Per-object pseudo-tables: what a blocking read of one object (an allocation, an evaluation, a
 * deployment, a job, a job's summary, a job's versions, a dynamic host volume) waits on, as
 * Nomad's GetAlloc, GetEval, … watch that one row. A write touches the pseudo-table of each object it writes, so a held
 * `GET /v1/allocation/A?index=N` is woken by a change to A (or its deletion) and by nothing else
 * in the allocation table.
 *
 * Nothing is stored for them: a pseudo-table's index is the object's ModifyIndex (a job's
 * versions: the highest of theirs, as Nomad's GetJobVersions answers; at least the last restore's index), or its table's index once the object is gone (which is at least the
 * index it was deleted at). That is exactly the index the read answers (blocking-query.ts), so a
 * reader is woken when, and only when, its answer would move.
 */
import { Table, type StateReader } from './state-reader.js';

/** The prefix of every per-object pseudo-table. */
export const OBJECT_TABLE_PREFIX = 'object/';

/** The tables whose rows have a pseudo-table each. */
export type ObjectTable =
  | typeof Table.Allocs
  | typeof Table.Evals
  | typeof Table.Deployments
  | typeof Table.Jobs
  | typeof Table.JobSummaries
  | typeof Table.JobVersions
  | typeof Table.HostVolumes;

/** The pseudo-table of one row of `table`; `key` is the row's key (jobs and summaries: namespace NUL ID). */
export function objectTableKey(table: ObjectTable, key: string): Table {
  return `${OBJECT_TABLE_PREFIX}${table}/${key}` as Table;
}

/** The pseudo-table of one allocation. */
export function allocTableKey(id: string): Table {
  return objectTableKey(Table.Allocs, id);
}

/** The pseudo-table of one evaluation. */
export function evalTableKey(id: string): Table {
  return objectTableKey(Table.Evals, id);
}

/** The pseudo-table of one deployment. */
export function deploymentTableKey(id: string): Table {
  return objectTableKey(Table.Deployments, id);
}

/** The pseudo-table of one job (its current version). */
export function jobTableKey(namespace: string, id: string): Table {
  return objectTableKey(Table.Jobs, `${namespace}\u0000${id}`);
}

/** The pseudo-table of one job's summary. */
export function jobSummaryTableKey(namespace: string, id: string): Table {
  return objectTableKey(Table.JobSummaries, `${namespace}\u0000${id}`);
}

/** The pseudo-table of one job's stored versions (all of them: a tag or stability change to an old one moves it). */
export function jobVersionsTableKey(namespace: string, id: string): Table {
  return objectTableKey(Table.JobVersions, `${namespace}\u0000${id}`);
}

/** The pseudo-table of one dynamic host volume. */
export function hostVolumeTableKey(id: string): Table {
  return objectTableKey(Table.HostVolumes, id);
}

/** What objectTableIndex reads. */
export type ObjectRows = Pick<
  StateReader,
  'tableIndex' | 'allocById' | 'evalById' | 'deploymentById' | 'jobById' | 'jobSummary' | 'jobVersions' | 'hostVolumeById' | 'restoreIndex'
>;

/**
 * The index of a per-object pseudo-table (`table` starts with OBJECT_TABLE_PREFIX): the object's
 * ModifyIndex, at least the last restore's; its table's index when the object does not exist.
 */
export function objectTableIndex(state: ObjectRows, table: Table): number {
  const parsed = parseObjectTable(table);
  if (!parsed) throw new Error(`not a per-object pseudo-table: ${table}`);
  const row = rowOf(state, parsed.table, parsed.key);
  return row ? Math.max(row.ModifyIndex, state.restoreIndex?.() ?? 0) : state.tableIndex(parsed.table);
}

function rowOf(state: ObjectRows, table: ObjectTable, key: string): { ModifyIndex: number } | undefined {
  switch (table) {
    case Table.Allocs:
      return state.allocById(key);
    case Table.Evals:
      return state.evalById(key);
    case Table.Deployments:
      return state.deploymentById(key);
    case Table.HostVolumes:
      return state.hostVolumeById(key);
    case Table.Jobs:
    case Table.JobSummaries:
    case Table.JobVersions: {
      const sep = key.indexOf('\u0000');
      const [namespace, id] = [key.slice(0, sep), key.slice(sep + 1)];
      if (table === Table.Jobs) return state.jobById(namespace, id);
      if (table === Table.JobSummaries) return state.jobSummary(namespace, id);
      return newestOf(state.jobVersions(namespace, id));
    }
    default: {
      const never: never = table;
      return never;
    }
  }
}

/** The highest ModifyIndex of a job's versions (undefined: none stored). */
function newestOf(versions: readonly { ModifyIndex: number }[]): { ModifyIndex: number } | undefined {
  if (versions.length === 0) return undefined;
  let ModifyIndex = 0;
  for (const v of versions) ModifyIndex = Math.max(ModifyIndex, v.ModifyIndex);
  return { ModifyIndex };
}

/**
 * The objects blocked readers wait on right now, counted by table and key, so that a write
 * builds and files the pseudo-table of an object only when someone waits on it: a plan of 50,000
 * allocations that nobody reads one by one costs one map lookup per allocation, not a key each.
 */
export class WatchedObjects {
  private readonly byTable = new Map<string, Map<string, number>>();

  /** Counts the per-object pseudo-tables among `tables` (a reader begins to wait on them). */
  add(tables: readonly Table[]): void {
    for (const t of tables) {
      const parsed = parseObjectTable(t);
      if (!parsed) continue;
      let keys = this.byTable.get(parsed.table);
      if (!keys) this.byTable.set(parsed.table, (keys = new Map()));
      keys.set(parsed.key, (keys.get(parsed.key) ?? 0) + 1);
    }
  }

  /** Uncounts them (that reader's wait ended). */
  remove(tables: readonly Table[]): void {
    for (const t of tables) {
      const parsed = parseObjectTable(t);
      const keys = parsed && this.byTable.get(parsed.table);
      if (!parsed || !keys) continue;
      const n = (keys.get(parsed.key) ?? 0) - 1;
      if (n > 0) keys.set(parsed.key, n);
      else keys.delete(parsed.key);
      if (keys.size === 0) this.byTable.delete(parsed.table);
    }
  }

  /** Whether a reader waits on the row `key` of `table`. */
  has(table: ObjectTable, key: string): boolean {
    return this.byTable.get(table)?.has(key) ?? false;
  }
}

/** The table and row key of a per-object pseudo-table; undefined for any other table. */
function parseObjectTable(t: Table): { table: ObjectTable; key: string } | undefined {
  if (!t.startsWith(OBJECT_TABLE_PREFIX)) return undefined;
  const rest = t.slice(OBJECT_TABLE_PREFIX.length);
  const slash = rest.indexOf('/');
  return { table: rest.slice(0, slash) as ObjectTable, key: rest.slice(slash + 1) };
}
