/** Fuzzy text matching for filters: every character of the query, in order, case-insensitive. */
export function fuzzyMatch(query: string, text: string): boolean {
  const q = query.trim().toLowerCase();
  const t = text.toLowerCase();
  let i = 0;
  for (const c of t) if (i < q.length && c === q[i]) i++;
  return i === q.length;
}
