/** How the UI writes times, sizes and IDs. */

/** The first 8 characters of an ID, as the CLI shows it. */
export function shortId(id: string): string {
  return id.slice(0, 8);
}

/** "3s ago", "5m ago", "2h ago", "4d ago" for a time in ms since epoch. */
export function ago(ms: number, now = Date.now()): string {
  if (!ms) return '—';
  const s = Math.max(0, Math.round((now - ms) / 1000));
  if (s < 60) return `${s}s ago`;
  if (s < 3600) return `${Math.floor(s / 60)}m ago`;
  if (s < 86400) return `${Math.floor(s / 3600)}h ago`;
  return `${Math.floor(s / 86400)}d ago`;
}

/** Nomad's Unix-nanosecond times → ms. */
export function nanosToMs(ns: number): number {
  return Math.floor(ns / 1e6);
}

/** A local date-time for a Unix-nanosecond time. */
export function dateTime(ns: number): string {
  return ns ? new Date(nanosToMs(ns)).toLocaleString() : '—';
}

/** "1.5 GiB" for a byte count. */
export function bytes(n: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = n;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return `${v >= 10 || u === 0 ? Math.round(v) : v.toFixed(1)} ${units[u]}`;
}

/** Path segment encoding for IDs (job IDs may hold "/"). */
export function seg(id: string): string {
  return encodeURIComponent(id);
}

/** The query suffix that pins a non-default namespace. */
export function nsQuery(ns: string | undefined): string {
  return ns && ns !== 'default' ? `?namespace=${encodeURIComponent(ns)}` : '';
}
