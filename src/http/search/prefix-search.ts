/**
 * Nomad's prefix search (`POST /v1/search`): the IDs in one context (or every context) that
 * start with a prefix, at most SEARCH_LIMIT per context with a truncation flag. `nomad status
 * <prefix>` uses it with context "all" to decide which object a prefix names.
 */
import { CaravanError } from '../../structs/caravan-error.js';
import type { StateReader } from '../../server/state/state-reader.js';
import { Table } from '../../server/state/state-reader.js';

/** Search contexts with Nomad's exact strings (note the singular "deployment"). */
export const SearchContext = {
  All: 'all',
  Allocs: 'allocs',
  Deployments: 'deployment',
  Evals: 'evals',
  Jobs: 'jobs',
  Nodes: 'nodes',
  NodePools: 'node_pools',
  Namespaces: 'namespaces',
  Plugins: 'plugins',
  Volumes: 'volumes',
} as const;
export type SearchContext = (typeof SearchContext)[keyof typeof SearchContext];

/** The contexts searched for "all", in Nomad's order; CSI plugins and volumes are always empty here. */
export const ALL_PREFIX_CONTEXTS: readonly SearchContext[] = [
  SearchContext.Allocs,
  SearchContext.Deployments,
  SearchContext.Evals,
  SearchContext.Jobs,
  SearchContext.Nodes,
  SearchContext.NodePools,
  SearchContext.Namespaces,
  SearchContext.Plugins,
  SearchContext.Volumes,
];

/** Nomad's default cap on matches per context. */
export const SEARCH_LIMIT = 20;

/** A search context name that is not one of SearchContext. */
export class SearchContextError extends CaravanError<'SEARCH_BAD_CONTEXT'> {
  constructor(readonly context: string) {
    super('SEARCH_BAD_CONTEXT', { context: JSON.stringify(context), contexts: Object.values(SearchContext).join(', ') });
    this.name = 'SearchContextError';
  }
}

/** Parses a request's Context; "" means "all" (as the UI sends it). Throws SearchContextError. */
export function parseSearchContext(raw: string): SearchContext {
  if (raw === '') return SearchContext.All;
  const known = Object.values(SearchContext) as string[];
  if (!known.includes(raw)) throw new SearchContextError(raw);
  return raw as SearchContext;
}

/** The answer of a prefix search, Nomad's SearchResponse without its query meta. */
export interface PrefixSearchResult {
  Matches: Record<string, string[]>;
  Truncations: Record<string, boolean>;
  /** The highest index of the tables searched (for X-Nomad-Index). */
  index: number;
}

/** The state tables a context reads, for the answer's index. */
function tablesOf(ctx: SearchContext): Table[] {
  switch (ctx) {
    case SearchContext.Allocs:
      return [Table.Allocs];
    case SearchContext.Deployments:
      return [Table.Deployments];
    case SearchContext.Evals:
      return [Table.Evals];
    case SearchContext.Jobs:
    case SearchContext.Namespaces:
      return [Table.Jobs];
    case SearchContext.Nodes:
    case SearchContext.NodePools:
      return [Table.Nodes];
    case SearchContext.Plugins:
    case SearchContext.Volumes:
    case SearchContext.All:
      return [];
    default: {
      const never: never = ctx;
      return never;
    }
  }
}

/** The names of the namespaces that exist ("default" always), sorted. */
export function knownNamespaces(state: StateReader): string[] {
  return state.namespaces().map((n) => n.Name);
}

/** Every ID in `ctx` starting with `prefix`, sorted (jobs only in `namespace`, "*" for all). */
function idsIn(state: StateReader, ctx: SearchContext, prefix: string, namespace: string): string[] {
  switch (ctx) {
    case SearchContext.Allocs:
      return state
        .allocs(prefix)
        .filter((a) => namespace === '*' || a.Namespace === namespace)
        .map((a) => a.ID);
    case SearchContext.Deployments:
      return state
        .deployments(prefix)
        .filter((d) => namespace === '*' || d.Namespace === namespace)
        .map((d) => d.ID);
    case SearchContext.Evals:
      return state
        .evals(prefix)
        .filter((e) => namespace === '*' || e.Namespace === namespace)
        .map((e) => e.ID);
    case SearchContext.Jobs:
      return state.jobs(namespace, prefix).map((j) => j.ID);
    case SearchContext.Nodes:
      return state.nodes(prefix).map((n) => n.ID);
    case SearchContext.NodePools: {
      const pools = new Set<string>(['all', 'default']);
      for (const n of state.nodes()) pools.add(n.NodePool);
      return [...pools].filter((p) => p.startsWith(prefix));
    }
    case SearchContext.Namespaces:
      return knownNamespaces(state).filter((n) => n.startsWith(prefix));
    case SearchContext.Plugins:
    case SearchContext.Volumes:
    case SearchContext.All:
      return [];
    default: {
      const never: never = ctx;
      return never;
    }
  }
}

/**
 * Runs a prefix search. With context "all" every context appears in Matches (empty when
 * nothing matched), as Nomad answers; otherwise only the one asked for.
 */
export function prefixSearch(state: StateReader, prefix: string, context: SearchContext, namespace: string): PrefixSearchResult {
  const contexts = context === SearchContext.All ? ALL_PREFIX_CONTEXTS : [context];
  const out: PrefixSearchResult = { Matches: {}, Truncations: {}, index: 1 };
  for (const ctx of contexts) {
    const ids = [...new Set(idsIn(state, ctx, prefix, namespace))].sort();
    out.Matches[ctx] = ids.slice(0, SEARCH_LIMIT);
    out.Truncations[ctx] = ids.length > SEARCH_LIMIT;
    for (const t of tablesOf(ctx)) out.index = Math.max(out.index, state.tableIndex(t));
  }
  return out;
}
