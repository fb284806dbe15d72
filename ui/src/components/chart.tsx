/** A small SVG line chart of recent samples (CPU and memory on the allocation page). */

export function LineChart({ label, values, format, max }: { label: string; values: number[]; format: (v: number) => string; max?: number }) {
  const w = 300;
  const h = 100;
  const top = Math.max(max ?? 0, ...values, 1e-9);
  const n = Math.max(values.length - 1, 1);
  const pts = values.map((v, i) => `${((i / n) * w).toFixed(1)},${(h - (v / top) * (h - 6) - 3).toFixed(1)}`);
  const last = values[values.length - 1];
  return (
    <figure class="chart-box">
      <figcaption>
        {label}: <strong>{last === undefined ? '—' : format(last)}</strong>
        <span class="muted"> (max {format(Math.max(0, ...values))})</span>
      </figcaption>
      <svg class="chart" viewBox={`0 0 ${w} ${h}`} preserveAspectRatio="none" role="img" aria-label={`${label} over the last ${values.length} samples`}>
        {pts.length > 1 && (
          <>
            <polygon class="area" points={`0,${h} ${pts.join(' ')} ${w},${h}`} />
            <polyline class="line" points={pts.join(' ')} vector-effect="non-scaling-stroke" />
          </>
        )}
      </svg>
    </figure>
  );
}
