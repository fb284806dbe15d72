/** Matching the members of an old and a new list (tasks by name, ports by label, …). */

/**
 * Each old item with the new item of the same key (or null when it was removed), then the new
 * items no old one matched (with null). Later items win over earlier ones of the same key.
 */
export function pairByKey<T>(older: Iterable<T>, newer: Iterable<T>, keyOf: (item: T) => string): [T | null, T | null][] {
  const oldByKey = new Map<string, T>();
  for (const o of older) oldByKey.set(keyOf(o), o);
  const newByKey = new Map<string, T>();
  for (const n of newer) newByKey.set(keyOf(n), n);
  const pairs: [T | null, T | null][] = [];
  for (const [key, o] of oldByKey) pairs.push([o, newByKey.get(key) ?? null]);
  for (const [key, n] of newByKey) if (!oldByKey.has(key)) pairs.push([null, n]);
  return pairs;
}
