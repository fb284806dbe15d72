/** A job's allocations by client status, as a stacked bar with the counts spelled out. */
import type { JobSummary, TaskGroupSummary } from '../../../src/structs/job.js';

const ORDER: Array<keyof TaskGroupSummary> = ['Running', 'Starting', 'Queued', 'Complete', 'Failed', 'Lost', 'Unknown'];

/** Sums the per-group counts of a summary. */
export function totalSummary(summary: JobSummary | null | undefined): TaskGroupSummary {
  const t: TaskGroupSummary = { Queued: 0, Complete: 0, Failed: 0, Running: 0, Starting: 0, Lost: 0, Unknown: 0 };
  for (const g of Object.values(summary?.Summary ?? {})) for (const k of ORDER) t[k] += g[k] ?? 0;
  return t;
}

export function SummaryBar({ counts }: { counts: TaskGroupSummary }) {
  const total = ORDER.reduce((n, k) => n + counts[k], 0);
  const text = ORDER.filter((k) => counts[k] > 0)
    .map((k) => `${counts[k]} ${k.toLowerCase()}`)
    .join(', ');
  return (
    <div class="summary" data-testid="alloc-summary" aria-label={`Allocations: ${text || 'none'}`}>
      <div class="bar" aria-hidden="true">
        {total > 0 &&
          ORDER.filter((k) => counts[k] > 0).map((k) => (
            <span key={k} class={`seg seg-${k.toLowerCase()}`} style={{ flexGrow: counts[k] }} title={`${counts[k]} ${k}`} />
          ))}
      </div>
      <span class="counts">{text || 'no allocations'}</span>
    </div>
  );
}

/** A status word with its color. */
export function StatusBadge({ status }: { status: string }) {
  return <span class={`badge badge-${status.replace(/[^a-z]/gi, '').toLowerCase()}`}>{status}</span>;
}
