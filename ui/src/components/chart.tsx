/**
 * A small SVG line chart of recent samples (CPU and memory on the allocation page), with a
 * y-axis scale (top, middle, zero) and an optional limit drawn as a dashed line — what the
 * task was given, so use reads against it. The scale's top is the larger of the limit and the
 * highest sample, so a task idling far under its limit shows a flat line near zero, not an
 * empty box.
 */

export function LineChart({ label, values, format, limit }: { label: string; values: number[]; format: (v: number) => string; limit?: number | undefined }) {
  const w = 300;
  const h = 100;
  const top = Math.max(limit ?? 0, ...values) || 1;
  const y = (v: number) => h - (v / top) * (h - 6) - 3;
  const n = Math.max(values.length - 1, 1);
  const pts = values.map((v, i) => `${((i / n) * w).toFixed(1)},${y(v).toFixed(1)}`);
  const last = values[values.length - 1];
  return (
    <figure class="chart-box" data-testid={`chart-${label.split(' ')[0]!.toLowerCase()}`}>
      <figcaption>
        {label}: <strong>{last === undefined ? '—' : format(last)}</strong>
        {limit !== undefined && <span class="muted"> of {format(limit)} reserved</span>}
        <span class="muted"> (max {format(Math.max(0, ...values))})</span>
      </figcaption>
      <div class="chart-plot">
        <div class="chart-scale" aria-hidden="true" data-testid="chart-scale">
          <span>{format(top)}</span>
          <span>{format(top / 2)}</span>
          <span>{format(0)}</span>
        </div>
        <svg class="chart" viewBox={`0 0 ${w} ${h}`} preserveAspectRatio="none" role="img" aria-label={`${label} over the last ${values.length} samples, scale 0 to ${format(top)}`}>
          <line class="grid" x1="0" x2={w} y1={y(top / 2)} y2={y(top / 2)} vector-effect="non-scaling-stroke" />
          {limit !== undefined && <line class="limit" data-testid="limit-line" x1="0" x2={w} y1={y(limit)} y2={y(limit)} vector-effect="non-scaling-stroke" />}
          {pts.length > 1 && (
            <>
              <polygon class="area" points={`0,${h} ${pts.join(' ')} ${w},${h}`} />
              <polyline class="line" points={pts.join(' ')} vector-effect="non-scaling-stroke" />
            </>
          )}
          {pts.length === 1 && <circle class="point" cx={w} cy={y(values[0]!)} r="3" />}
        </svg>
      </div>
    </figure>
  );
}
