/**
 * Nomad-style plain text output: aligned columns (rows of "|"-free cells separated by two
 * spaces, like Nomad's columnize) and "Key = Value" lists.
 */

/** Renders rows (the first is the header) as left-aligned columns joined by two spaces. */
export function formatColumns(rows: readonly (readonly string[])[]): string {
  if (rows.length === 0) return '';
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cell.length)));
  return rows
    .map((row) => row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]!))).join('  ').trimEnd())
    .join('\n');
}

/** Renders pairs as "Key  = Value" lines with the "=" signs aligned. */
export function formatKV(pairs: readonly (readonly [string, string])[]): string {
  const width = Math.max(0, ...pairs.map(([k]) => k.length));
  return pairs.map(([k, v]) => `${k.padEnd(width)} = ${v}`).join('\n');
}

/** The first 8 characters of an ID, as Nomad shows IDs unless -verbose. */
export function short(id: string, verbose = false): string {
  return verbose ? id : id.slice(0, 8);
}
