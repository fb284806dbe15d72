/** A line diff (longest common subsequence) for job versions and plans. */

export interface DiffLine {
  op: ' ' | '+' | '-';
  text: string;
}

/** The lines of `a` → `b`; inputs over 4,000 lines each are compared without alignment. */
export function diffLines(a: string[], b: string[]): DiffLine[] {
  if (a.length * b.length > 16_000_000) return [...a.map((text) => ({ op: '-' as const, text })), ...b.map((text) => ({ op: '+' as const, text }))];
  const n = a.length;
  const m = b.length;
  // lcs[i][j] = LCS length of a[i..] and b[j..], in one flat array.
  const lcs = new Uint32Array((n + 1) * (m + 1));
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      lcs[i * (m + 1) + j] = a[i] === b[j] ? lcs[(i + 1) * (m + 1) + j + 1]! + 1 : Math.max(lcs[(i + 1) * (m + 1) + j]!, lcs[i * (m + 1) + j + 1]!);
    }
  }
  const out: DiffLine[] = [];
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (a[i] === b[j]) {
      out.push({ op: ' ', text: a[i]! });
      i++;
      j++;
    } else if (lcs[(i + 1) * (m + 1) + j]! >= lcs[i * (m + 1) + j + 1]!) out.push({ op: '-', text: a[i++]! });
    else out.push({ op: '+', text: b[j++]! });
  }
  while (i < n) out.push({ op: '-', text: a[i++]! });
  while (j < m) out.push({ op: '+', text: b[j++]! });
  return out;
}

/** Only the changed lines with `context` lines around them; "…" marks skipped runs. */
export function changedOnly(lines: DiffLine[], context = 2): Array<DiffLine | '…'> {
  const keep = new Array<boolean>(lines.length).fill(false);
  lines.forEach((l, i) => {
    if (l.op !== ' ') for (let k = Math.max(0, i - context); k <= Math.min(lines.length - 1, i + context); k++) keep[k] = true;
  });
  const out: Array<DiffLine | '…'> = [];
  let skipped = false;
  lines.forEach((l, i) => {
    if (keep[i]) {
      out.push(l);
      skipped = false;
    } else if (!skipped) {
      out.push('…');
      skipped = true;
    }
  });
  return out;
}

/** Fields that change on every registration and say nothing about the job itself. */
const NOISE = new Set(['Version', 'SubmitTime', 'CreateIndex', 'ModifyIndex', 'JobModifyIndex', 'Stable', 'Status', 'StatusDescription']);

/** A job as stable, indented JSON lines for diffing. */
export function jobLines(job: unknown): string[] {
  return JSON.stringify(job, (k, v: unknown) => (NOISE.has(k) ? undefined : v), 2).split('\n');
}

export function DiffView({ lines }: { lines: Array<DiffLine | '…'> }) {
  return (
    <pre class="code diff" aria-label="Differences">
      {lines.map((l, i) =>
        l === '…' ? (
          <span key={i} class="muted">
            {'  …\n'}
          </span>
        ) : (
          <span key={i} class={l.op === '+' ? 'add' : l.op === '-' ? 'del' : ''}>
            {`${l.op} ${l.text}\n`}
          </span>
        ),
      )}
    </pre>
  );
}
