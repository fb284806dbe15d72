/**
 * Constraint evaluation against one node: interpolation of `${attr.…}`, `${meta.…}` and
 * `${node.…}` targets and every Nomad operator that depends only on the node. The operators
 * that depend on other allocations (distinct_hosts, distinct_property) are handled by the
 * placement stack, which knows the proposed allocations.
 */
import type { Constraint, Node } from '../structs/index.js';
import { versionSatisfies } from './version-constraint.js';

/** Operators that need the set of proposed allocations, not just the node. */
export const DistinctOperator = { Hosts: 'distinct_hosts', Property: 'distinct_property' } as const;

/** Reads one target's value from a node. */
export type TargetResolver = (node: Node) => string | undefined;

const resolvers = new Map<string, TargetResolver>();

function compileTarget(target: string): TargetResolver {
  if (!target.startsWith('${') || !target.endsWith('}')) return () => target;
  const key = target.slice(2, -1);
  switch (key) {
    case 'node.unique.id': return (n) => n.ID;
    case 'node.datacenter': return (n) => n.Datacenter;
    case 'node.unique.name': return (n) => n.Name;
    case 'node.class': return (n) => n.NodeClass;
    case 'node.pool': return (n) => n.NodePool;
    default:
  }
  if (key.startsWith('attr.')) {
    const name = key.slice(5);
    return (n) => n.Attributes[name];
  }
  if (key.startsWith('meta.')) {
    const name = key.slice(5);
    return (n) => n.Meta?.[name];
  }
  return () => undefined;
}

/**
 * The resolver of a target, parsed once per distinct target text: resolving then costs a
 * property read, with no string slicing per node.
 */
export function targetResolver(target: string): TargetResolver {
  let r = resolvers.get(target);
  if (!r) {
    r = compileTarget(target);
    if (resolvers.size > 10_000) resolvers.clear();
    resolvers.set(target, r);
  }
  return r;
}

/**
 * Resolves a constraint target on a node: `${attr.x}`, `${meta.x}`, `${node.unique.id}`,
 * `${node.datacenter}`, `${node.unique.name}`, `${node.class}`, `${node.pool}`; anything not
 * wrapped in `${}` is a literal. Undefined when the node has no such value.
 */
export function resolveTarget(target: string, node: Node): string | undefined {
  return targetResolver(target)(node);
}

/** Nomad's text of a constraint, used as the key of ConstraintFiltered. */
export function constraintString(c: { LTarget: string; Operand: string; RTarget: string }): string {
  return `${c.LTarget} ${c.Operand} ${c.RTarget}`.trim();
}

const regexCache = new Map<string, RegExp | null>();

function cachedRegex(pattern: string): RegExp | null {
  let re = regexCache.get(pattern);
  if (re === undefined) {
    try {
      re = new RegExp(pattern);
    } catch {
      re = null;
    }
    if (regexCache.size > 1000) regexCache.clear();
    regexCache.set(pattern, re);
  }
  return re;
}

// A constraint's right side is the same text for every node checked; parse it once.
const setCache = new Map<string, readonly string[]>();

function cachedSplitSet(s: string): readonly string[] {
  let list = setCache.get(s);
  if (list === undefined) {
    list = splitSet(s);
    if (setCache.size > 1000) setCache.clear();
    setCache.set(s, list);
  }
  return list;
}

function splitSet(s: string): string[] {
  return s.split(',').map((x) => x.trim()).filter((x) => x !== '');
}

/** Orders like Nomad: numerically when both sides parse as numbers, else lexically. */
function compareOrder(l: string, r: string): number {
  const ln = Number(l);
  const rn = Number(r);
  if (l.trim() !== '' && r.trim() !== '' && !Number.isNaN(ln) && !Number.isNaN(rn)) return ln - rn;
  return l < r ? -1 : l > r ? 1 : 0;
}

/**
 * True when the operator holds between the resolved left and right values. `lv`/`rv` are
 * undefined when the target did not resolve on the node.
 */
export function checkOperand(operand: string, lv: string | undefined, rv: string | undefined): boolean {
  switch (operand) {
    case 'is_set': return lv !== undefined;
    case 'is_not_set': return lv === undefined;
    case DistinctOperator.Hosts:
    case DistinctOperator.Property:
      return true;
    default:
  }
  if (lv === undefined || rv === undefined) return false;
  switch (operand) {
    case '=':
    case '==':
    case 'is':
      return lv === rv;
    case '!=':
    case 'not':
      return lv !== rv;
    case '<': return compareOrder(lv, rv) < 0;
    case '<=': return compareOrder(lv, rv) <= 0;
    case '>': return compareOrder(lv, rv) > 0;
    case '>=': return compareOrder(lv, rv) >= 0;
    case 'regexp': {
      const re = cachedRegex(rv);
      return re !== null && re.test(lv);
    }
    case 'version': return versionSatisfies(lv, rv, 'version');
    case 'semver': return versionSatisfies(lv, rv, 'semver');
    case 'set_contains':
    case 'set_contains_all': {
      const have = new Set(splitSet(lv));
      return cachedSplitSet(rv).every((x) => have.has(x));
    }
    case 'set_contains_any': {
      const have = splitSet(lv);
      return have.length === 1 ? cachedSplitSet(rv).includes(have[0]!) : cachedSplitSet(rv).some((x) => have.includes(x));
    }
    default:
      return false;
  }
}

/**
 * True when the node satisfies a constraint (or affinity) that depends only on the node.
 * distinct_* operators answer true here; the stack checks them.
 */
export function nodeMeetsConstraint(c: Constraint, node: Node): boolean {
  if (c.Operand === DistinctOperator.Hosts || c.Operand === DistinctOperator.Property) return true;
  // Nomad treats the common operand spellings case-sensitively; an empty operand means "=".
  const operand = c.Operand === '' ? '=' : c.Operand;
  const lv = resolveTarget(c.LTarget, node);
  const rv = operand === 'is_set' || operand === 'is_not_set' ? '' : resolveTarget(c.RTarget, node);
  return checkOperand(operand, lv, rv);
}

/** True when a datacenter matches one of the job's patterns (`*` matches any run of characters). */
export function datacenterMatches(dc: string, patterns: readonly string[]): boolean {
  for (const p of patterns) {
    if (p === dc || p === '*') return true;
    if (p.includes('*')) {
      const re = cachedRegex('^' + p.split('*').map(escapeRegex).join('.*') + '$');
      if (re?.test(dc)) return true;
    }
  }
  return false;
}

function escapeRegex(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
