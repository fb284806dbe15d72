/**
 * Times as the CLI prints them: absolute ("2024-01-02T15:04:05Z") and relative ("1m3s ago").
 */
import { formatDuration } from '../../structs/duration.js';

/**
 * A moment (ms since the epoch) as Nomad's formatTime prints every absolute time: RFC 3339 in
 * whole seconds ("2024-01-02T15:04:05Z"). The one format of the CLI's timestamps.
 */
export function formatTimeMs(ms: number): string {
  return new Date(Math.floor(ms)).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** Unix nanoseconds → an RFC 3339 timestamp without fractions; "<none>" for 0. */
export function formatUnixNanos(ns: number): string {
  if (!ns) return '<none>';
  return new Date(Math.floor(ns / 1e6)).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** How long ago `ns` (Unix nanoseconds) was, relative to `nowMs`, rounded to seconds. */
export function formatAgo(ns: number, nowMs: number): string {
  if (!ns) return '<none>';
  const diffMs = Math.max(0, nowMs - ns / 1e6);
  return `${formatDuration(Math.round(diffMs / 1000) * 1e9)} ago`;
}

/** An RFC 3339 timestamp from the API (with or without fractions) as the CLI prints times: whole seconds; "N/A" when unset. */
export function formatIsoTime(iso: string | null | undefined): string {
  if (!iso || iso.startsWith('0001-01-01')) return 'N/A';
  const ms = Date.parse(iso);
  if (Number.isNaN(ms)) return iso;
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}
