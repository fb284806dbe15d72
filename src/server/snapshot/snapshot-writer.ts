/**
 * Writes a state snapshot to the log in chunks without stalling the write path: the state is
 * captured at an index (a reference copy), then each chunk is built and handed to the log in
 * its own turn of the event loop, so commands keep being appended and applied meanwhile. The
 * snapshot becomes visible only when the log commits it; the caller compacts after that.
 */
import type { LogBackend, SnapshotSink } from '../log/log-backend.js';
import type { StateStore } from '../state/state-store.js';
import { DEFAULT_ROWS_PER_CHUNK, captureState, encodeSnapshot, type StateCapture } from './snapshot-encoder.js';
import { SnapshotError } from './snapshot-format.js';

/** What a written snapshot cost. */
export interface SnapshotStats {
  index: number;
  bytes: number;
  chunks: number;
  allocs: number;
  /** Milliseconds the synchronous capture held the event loop. */
  captureMs: number;
  /** Milliseconds from capture to commit. */
  totalMs: number;
}

/** Options of writeSnapshot. */
export interface SnapshotWriteOptions {
  rowsPerChunk?: number;
  /** Checked between chunks; true aborts the snapshot (server shutting down). */
  shouldStop?: () => boolean;
  /** Monotonic milliseconds, for the stats only. */
  now?: () => number;
}

/** Captures `store` now and writes it to `log` in slices; resolves once committed. */
export async function writeSnapshot(log: LogBackend, store: StateStore, opts: SnapshotWriteOptions = {}): Promise<SnapshotStats> {
  const now = opts.now ?? (() => performance.now());
  const t0 = now();
  const capture = captureState(store);
  const captureMs = now() - t0;
  const sink = log.beginSnapshot ? await log.beginSnapshot(capture.index) : joiningSink(log, capture.index);
  try {
    const { bytes, chunks } = await writeChunks(capture, sink, opts);
    await sink.commit();
    return { index: capture.index, bytes, chunks, allocs: capture.allocs.length, captureMs, totalMs: now() - t0 };
  } catch (err) {
    await sink.abort().catch(() => undefined);
    throw err;
  }
}

async function writeChunks(capture: StateCapture, sink: SnapshotSink, opts: SnapshotWriteOptions): Promise<{ bytes: number; chunks: number }> {
  let bytes = 0;
  let chunks = 0;
  for (const chunk of encodeSnapshot(capture, opts.rowsPerChunk ?? DEFAULT_ROWS_PER_CHUNK)) {
    if (opts.shouldStop?.()) throw new SnapshotError('SNAPSHOT_ABORTED', `snapshot at ${capture.index}: aborted`);
    await sink.write(chunk);
    bytes += chunk.length;
    chunks++;
    // Let appends, applies and requests run between chunks.
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
  return { bytes, chunks };
}

/** A sink for a backend without chunked snapshots: joins the chunks into one saveSnapshot. */
function joiningSink(log: LogBackend, index: number): SnapshotSink {
  let parts: Buffer[] = [];
  return {
    index,
    write: async (chunk) => {
      parts.push(chunk);
    },
    commit: async () => {
      const data = Buffer.concat(parts);
      parts = [];
      await log.saveSnapshot(index, data);
    },
    abort: async () => {
      parts = [];
    },
  };
}
