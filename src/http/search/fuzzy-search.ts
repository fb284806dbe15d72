/**
 * Nomad's fuzzy search (`POST /v1/search/fuzzy`): objects whose name contains the text,
 * case-insensitively, each with the scope that locates it — jobs ([namespace]), task groups
 * ([namespace, job]), tasks ([namespace, job, group]), nodes ([node ID]) and allocations
 * ([namespace, alloc ID]). Exact names sort first, then prefixes, then the rest by name.
 */
import { CaravanError } from '../../structs/caravan-error.js';
import type { StateReader } from '../../server/state/state-reader.js';
import { Table } from '../../server/state/state-reader.js';
import { SEARCH_LIMIT, SearchContext } from './prefix-search.js';

/** Nomad's default shortest fuzzy text (`min_term_length`). */
export const FUZZY_MIN_TERM_LENGTH = 2;

/** One fuzzy match: the name found and the IDs that locate it. */
export interface FuzzyMatch {
  ID: string;
  Scope: string[];
}

/** The answer of a fuzzy search, Nomad's FuzzySearchResponse without its query meta. */
export interface FuzzySearchResult {
  Matches: Record<string, FuzzyMatch[]>;
  Truncations: Record<string, boolean>;
  index: number;
}

/** A fuzzy search text shorter than FUZZY_MIN_TERM_LENGTH. */
export class FuzzyTextError extends CaravanError<'SEARCH_FUZZY_TEXT_TOO_SHORT'> {
  constructor(readonly length: number) {
    super('SEARCH_FUZZY_TEXT_TOO_SHORT', { min: FUZZY_MIN_TERM_LENGTH, length });
    this.name = 'FuzzyTextError';
  }
}

/** The fuzzy result groups; "groups" and "tasks" come with the "jobs" context. */
const FuzzyGroup = { Jobs: 'jobs', Groups: 'groups', Tasks: 'tasks', Nodes: 'nodes', Allocs: 'allocs' } as const;
type FuzzyGroup = (typeof FuzzyGroup)[keyof typeof FuzzyGroup];

/** The result groups a context produces (none for contexts without named objects here). */
function groupsFor(context: SearchContext): FuzzyGroup[] {
  switch (context) {
    case SearchContext.All:
      return [FuzzyGroup.Jobs, FuzzyGroup.Groups, FuzzyGroup.Tasks, FuzzyGroup.Nodes, FuzzyGroup.Allocs];
    case SearchContext.Jobs:
      return [FuzzyGroup.Jobs, FuzzyGroup.Groups, FuzzyGroup.Tasks];
    case SearchContext.Nodes:
      return [FuzzyGroup.Nodes];
    case SearchContext.Allocs:
      return [FuzzyGroup.Allocs];
    case SearchContext.Deployments:
    case SearchContext.Evals:
    case SearchContext.NodePools:
    case SearchContext.Namespaces:
    case SearchContext.Plugins:
    case SearchContext.Volumes:
      return [];
    default: {
      const never: never = context;
      return never;
    }
  }
}

/** 0 exact, 1 prefix, 2 contained, -1 no match (case-insensitive). */
function rank(name: string, text: string): number {
  const n = name.toLowerCase();
  if (n === text) return 0;
  if (n.startsWith(text)) return 1;
  return n.includes(text) ? 2 : -1;
}

/** Runs a fuzzy search; throws FuzzyTextError when the text is too short. */
export function fuzzySearch(state: StateReader, text: string, context: SearchContext, namespace: string): FuzzySearchResult {
  const trimmed = text.trim();
  if (trimmed.length < FUZZY_MIN_TERM_LENGTH) throw new FuzzyTextError(trimmed.length);
  const needle = trimmed.toLowerCase();
  const found = new Map<FuzzyGroup, { rank: number; match: FuzzyMatch }[]>();
  const add = (group: FuzzyGroup, name: string, scope: string[]) => {
    const r = rank(name, needle);
    if (r < 0) return;
    const list = found.get(group) ?? [];
    list.push({ rank: r, match: { ID: name, Scope: scope } });
    found.set(group, list);
  };
  const groups = groupsFor(context);
  const wants = (g: FuzzyGroup) => groups.includes(g);
  let index = 1;
  if (wants(FuzzyGroup.Jobs)) {
    index = Math.max(index, state.tableIndex(Table.Jobs));
    for (const job of state.jobs(namespace)) {
      add(FuzzyGroup.Jobs, job.ID, [job.Namespace]);
      for (const tg of job.TaskGroups) {
        add(FuzzyGroup.Groups, tg.Name, [job.Namespace, job.ID]);
        for (const task of tg.Tasks) add(FuzzyGroup.Tasks, task.Name, [job.Namespace, job.ID, tg.Name]);
      }
    }
  }
  if (wants(FuzzyGroup.Nodes)) {
    index = Math.max(index, state.tableIndex(Table.Nodes));
    for (const node of state.nodes()) add(FuzzyGroup.Nodes, node.Name, [node.ID]);
  }
  if (wants(FuzzyGroup.Allocs)) {
    index = Math.max(index, state.tableIndex(Table.Allocs));
    for (const a of state.allocs()) {
      if (namespace === '*' || a.Namespace === namespace) add(FuzzyGroup.Allocs, a.Name, [a.Namespace, a.ID]);
    }
  }
  const out: FuzzySearchResult = { Matches: {}, Truncations: {}, index };
  for (const g of groups) {
    const list = (found.get(g) ?? []).sort((a, b) => a.rank - b.rank || (a.match.ID < b.match.ID ? -1 : a.match.ID > b.match.ID ? 1 : 0));
    if (list.length > 0) out.Matches[g] = list.slice(0, SEARCH_LIMIT).map((x) => x.match);
    out.Truncations[g] = list.length > SEARCH_LIMIT;
  }
  return out;
}
