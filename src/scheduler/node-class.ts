/**
 * Computed node classes, as Nomad's: nodes that agree on everything a static feasibility check
 * can read — datacenter, pool, node class, drivers, attributes and meta other than the
 * `unique.` ones — share a class, so a task group's drivers and constraints are checked once per
 * class instead of once per node. Constraints that read a `unique.` value (or the node's ID or
 * name) "escape" the class and are checked per node.
 */
import type { Constraint, Node } from '../structs/index.js';

// Class keys are interned to small numbers, so caches keyed by class compare integers rather
// than long strings. Node objects are never mutated once stored (a change replaces the object),
// so the number computed for one stays right; keyed weakly, so nothing is kept alive.
const classIds = new Map<string, number>();
let nextClassId = 0;
const byNode = new WeakMap<Node, number>();
/** Past this many classes the interning table starts over (nothing piles up). */
const MAX_CLASSES = 1 << 16;

function sortedNonUnique(rec: Record<string, string> | null | undefined): string {
  if (!rec) return '';
  const keys = Object.keys(rec).filter((k) => !k.startsWith('unique.')).sort();
  let out = '';
  for (const k of keys) out += `${k}=${rec[k]}\u0001`;
  return out;
}

/** The key of the node's computed class: equal for nodes no static check can tell apart. */
export function computedClassKey(node: Node): string {
  let drivers = '';
  for (const name of Object.keys(node.Drivers ?? {}).sort()) {
    const d = node.Drivers[name]!;
    drivers += `${name}:${d.Detected ? 1 : 0}${d.Healthy ? 1 : 0}\u0001`;
  }
  return [node.Datacenter, node.NodePool, node.NodeClass, drivers, sortedNonUnique(node.Attributes), sortedNonUnique(node.Meta)].join('\u0002');
}

/** The node's computed class as a small number, stable for the process's life. */
export function computedClass(node: Node): number {
  const cached = byNode.get(node);
  if (cached !== undefined) return cached;
  const key = computedClassKey(node);
  let id = classIds.get(key);
  if (id === undefined) {
    // Numbers are never reused, so a number held across a reset never names another class.
    if (classIds.size >= MAX_CLASSES) classIds.clear();
    classIds.set(key, (id = nextClassId++));
  }
  byNode.set(node, id);
  return id;
}

/** True when a target reads something unique to one node, so its answer is not the class's. */
export function targetEscapesClass(target: string): boolean {
  if (!target.startsWith('${')) return false;
  return target.startsWith('${node.unique.') || target.startsWith('${attr.unique.') || target.startsWith('${meta.unique.');
}

/** True when the constraint (or affinity) must be checked per node rather than per class. */
export function constraintEscapesClass(c: Pick<Constraint, 'LTarget' | 'RTarget'>): boolean {
  return targetEscapesClass(c.LTarget) || targetEscapesClass(c.RTarget);
}
