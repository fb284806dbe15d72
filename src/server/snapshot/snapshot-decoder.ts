/**
 * Reads a snapshot back into the serialized state the store restores from. Accepts the
 * chunked format of snapshot-format.ts and the single-JSON SerializedState earlier versions
 * wrote, and refuses a chunked snapshot whose rows don't add up to its header's counts.
 */
import type { Allocation } from '../../structs/index.js';
import { unpackObjects } from '../fsm/command-codec.js';
import { MetricCompactor } from '../state/compact-metric.js';
import { LogError, type LogBackend } from '../log/log-backend.js';
import type { SerializedState } from '../state/serialized-state.js';
import { SNAPSHOT_FORMATS_READ, SnapshotError, zeroCounts, type SnapshotCounts, type SnapshotLine } from './snapshot-format.js';

const NEWLINE = 0x0a;

/** Decodes the lines of `chunks` (split anywhere) into a SerializedState. */
export async function decodeSnapshot(chunks: AsyncIterable<Buffer> | Iterable<Buffer>): Promise<SerializedState> {
  const d = new Decoder();
  let rest: Buffer | null = null;
  for await (const chunk of chunks) rest = feedLines(d, rest, chunk);
  if (rest && rest.length > 0) d.line(rest);
  return d.finish();
}

/** decodeSnapshot of one whole buffer, synchronously (the FSM's apply of a restore cannot wait). */
export function decodeSnapshotSync(data: Buffer): SerializedState {
  const d = new Decoder();
  const rest = feedLines(d, null, data);
  if (rest && rest.length > 0) d.line(rest);
  return d.finish();
}

/** Hands the complete lines of rest + chunk to d; returns the unfinished tail. */
function feedLines(d: Decoder, rest: Buffer | null, chunk: Buffer): Buffer | null {
  const buf: Buffer = rest ? Buffer.concat([rest, chunk]) : chunk;
  let start = 0;
  for (let nl = buf.indexOf(NEWLINE, start); nl !== -1; nl = buf.indexOf(NEWLINE, start)) {
    if (nl > start) d.line(buf.subarray(start, nl));
    start = nl + 1;
  }
  return start < buf.length ? buf.subarray(start) : null;
}

class Decoder {
  private state: SerializedState | null = null;
  private legacy = false;
  private expected: SnapshotCounts | null = null;
  private readonly seen = zeroCounts();
  private ended = false;
  private readonly metrics = new MetricCompactor();

  line(bytes: Buffer): void {
    let raw: unknown;
    try {
      raw = JSON.parse(bytes.toString('utf8'));
    } catch (err) {
      throw new SnapshotError('SNAPSHOT_CORRUPT', `snapshot: a line is not JSON: ${(err as Error).message}`, { cause: err });
    }
    if (this.state === null) {
      this.first(raw);
      return;
    }
    if (this.legacy || this.ended) throw new SnapshotError('SNAPSHOT_CORRUPT', 'snapshot: data after the end');
    const l = raw as SnapshotLine;
    const s = this.state;
    switch (l.t) {
      case 'header':
        throw new SnapshotError('SNAPSHOT_CORRUPT', 'snapshot: a second header');
      case 'jobs':
        pushAll(s.jobs, l.rows);
        this.seen.jobs += l.rows.length;
        break;
      case 'jobVersions':
        pushAll(s.jobVersions, l.rows);
        this.seen.jobVersions += l.rows.length;
        break;
      case 'summaries':
        pushAll(s.summaries, l.rows);
        this.seen.summaries += l.rows.length;
        break;
      case 'evals':
        pushAll(s.evals, l.rows);
        this.seen.evals += l.rows.length;
        break;
      case 'nodes':
        pushAll(s.nodes, l.rows);
        this.seen.nodes += l.rows.length;
        break;
      case 'deployments':
        pushAll(s.deployments, l.rows);
        this.seen.deployments += l.rows.length;
        break;
      case 'namespaces':
        s.namespaces ??= [];
        pushAll(s.namespaces, l.rows);
        this.seen.namespaces += l.rows.length;
        break;
      case 'allocs': {
        const rows = (l.pk ? unpackObjects(l.pk) : (l.rows ?? [])) as unknown as Allocation[];
        if (rows.length !== l.jv.length) throw new SnapshotError('SNAPSHOT_CORRUPT', 'snapshot: allocs: jv and rows differ in length');
        if (l.sm) this.scores(rows, l.sm);
        for (let i = 0; i < rows.length; i++) s.allocs.push({ alloc: rows[i]!, jobVersion: l.jv[i] ?? null });
        this.seen.allocs += rows.length;
        break;
      }
      case 'acl':
        s.acl = l.acl;
        break;
      case 'nodePools':
        s.nodePools = l.pools;
        break;
      case 'variables':
        s.variables = l.variables;
        break;
      case 'services':
        s.services = l.services;
        break;
      case 'hostVolumes':
        s.hostVolumes = l.volumes;
        break;
      case 'extras':
        s.schedulerConfig = l.schedulerConfig;
        if (l.autopilotConfig) s.autopilotConfig = l.autopilotConfig;
        s.submissions = l.submissions;
        s.scalingEvents = l.scalingEvents;
        break;
      case 'end':
        this.ended = true;
        this.checkCounts(l.counts);
        break;
      default: {
        const never: never = l;
        throw new SnapshotError('SNAPSHOT_CORRUPT', `snapshot: unknown line type "${String((never as { t: unknown }).t)}"`);
      }
    }
  }

  /** Completes the metrics whose score was written as a number (AllocsLine.sm), compactly. */
  private scores(rows: Allocation[], sm: unknown): void {
    if (!Array.isArray(sm) || sm.length !== rows.length) throw new SnapshotError('SNAPSHOT_CORRUPT', 'snapshot: allocs: sm and rows differ in length');
    for (let i = 0; i < rows.length; i++) {
      const score: unknown = sm[i];
      if (score === null) continue;
      const a = rows[i]!;
      if (typeof score !== 'number' || !a.Metrics || typeof a.Metrics !== 'object' || typeof a.NodeID !== 'string') {
        throw new SnapshotError('SNAPSHOT_CORRUPT', `snapshot: allocs: row ${i}: bad score`);
      }
      a.Metrics = this.metrics.compactWithTop(a.Metrics, a.NodeID, score);
    }
  }

  finish(): SerializedState {
    if (!this.state) throw new SnapshotError('SNAPSHOT_CORRUPT', 'snapshot: empty');
    if (!this.legacy && !this.ended) throw new SnapshotError('SNAPSHOT_CORRUPT', 'snapshot: cut short (no end line)');
    return this.state;
  }

  private first(raw: unknown): void {
    const o = raw as Partial<SnapshotLine> & Partial<SerializedState>;
    if (o && typeof o === 'object' && o.t === 'header') {
      const h = o as Extract<SnapshotLine, { t: 'header' }>;
      if (!SNAPSHOT_FORMATS_READ.includes(h.format)) throw new SnapshotError('SNAPSHOT_CORRUPT', `snapshot: format: unsupported version ${String(h.format)}`);
      this.expected = h.counts;
      this.state = {
        index: h.index,
        tableIndexes: h.tableIndexes,
        jobs: [],
        jobVersions: [],
        summaries: [],
        allocs: [],
        evals: [],
        nodes: [],
        deployments: [],
        // Left out by snapshots from before namespaces were kept: the store then derives them.
        ...(h.counts.namespaces !== undefined ? { namespaces: [] } : {}),
      };
      return;
    }
    if (o && typeof o === 'object' && typeof o.index === 'number' && Array.isArray(o.jobs) && Array.isArray(o.allocs)) {
      // A whole-state snapshot of an earlier version.
      this.legacy = true;
      this.state = o as SerializedState;
      return;
    }
    throw new SnapshotError('SNAPSHOT_CORRUPT', 'snapshot: header: missing');
  }

  private checkCounts(end: SnapshotCounts): void {
    for (const k of Object.keys(this.seen) as (keyof SnapshotCounts)[]) {
      // A count missing from a snapshot of an earlier format means none of those rows.
      if ((this.expected?.[k] ?? 0) !== this.seen[k] || (end[k] ?? 0) !== this.seen[k]) {
        throw new SnapshotError('SNAPSHOT_CORRUPT', `snapshot: ${k}: ${this.seen[k]} rows, header says ${this.expected?.[k] ?? '?'}`);
      }
    }
  }
}

/** Appends without spreading (a spread of a large batch can overflow the call stack). */
function pushAll<T>(to: T[], rows: T[]): void {
  for (const r of rows) to.push(r);
}

/** Reads of a snapshot superseded mid-way (LOG_COMPACTED) before giving up. */
const SUPERSEDED_RETRIES = 5;

/**
 * The log's newest committed snapshot decoded, or null when there is none. A newer snapshot
 * committed while this one is read may compact away what the read stands on (etcd's history):
 * the read then starts again on the new latest.
 */
export async function loadLatestSnapshot(log: LogBackend): Promise<{ index: number; state: SerializedState } | null> {
  for (let attempt = 0; ; attempt++) {
    try {
      if (log.openLatestSnapshot) {
        const src = await log.openLatestSnapshot();
        return src ? { index: src.index, state: await decodeSnapshot(src.chunks()) } : null;
      }
      const snap = await log.loadLatestSnapshot();
      return snap ? { index: snap.index, state: await decodeSnapshot([snap.data]) } : null;
    } catch (err) {
      if (!(err instanceof LogError && err.code === 'LOG_COMPACTED') || attempt >= SUPERSEDED_RETRIES) throw err;
    }
  }
}
