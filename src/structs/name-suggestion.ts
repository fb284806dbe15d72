/**
 * "Did you mean …?" for a misspelt name, as HCL (and so Nomad) suggests one: the closest known
 * name by edit distance, when fewer than three edits away. Pure; callers word the message.
 */

/** Levenshtein distance between two strings. */
function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      cur[j] = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = cur;
  }
  return prev[b.length]!;
}

/** The known name closest to `given` within two edits (the first of equals, in `known` order), else undefined. */
export function nameSuggestion(given: string, known: Iterable<string>): string | undefined {
  let best: string | undefined;
  let bestDist = 3;
  for (const k of known) {
    if (k === given) continue;
    const d = editDistance(given, k);
    if (d < bestDist) {
      best = k;
      bestDist = d;
    }
  }
  return best;
}

/** ` Did you mean "x"?` for `given`, or '' when no known name is close. */
export function didYouMean(given: string, known: Iterable<string>): string {
  const s = nameSuggestion(given, known);
  return s === undefined ? '' : ` Did you mean ${JSON.stringify(s)}?`;
}
