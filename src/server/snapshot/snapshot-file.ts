/**
 * A snapshot file as `GET /v1/operator/snapshot` writes it and `PUT` takes it back: the snapshot
 * lines of snapshot-format.ts, gzipped. gzip's CRC-32 and length trailer catch a damaged or
 * cut-off file, the header's format number one Caravan cannot read, and the end line's counts a
 * file whose lines were dropped; every such file is refused with SNAPSHOT_CORRUPT naming the problem.
 */
import { gunzipSync } from 'node:zlib';
import type { SerializedState } from '../state/serialized-state.js';
import { decodeSnapshotSync } from './snapshot-decoder.js';
import { SnapshotError } from './snapshot-format.js';

/** The state a snapshot file holds; SnapshotError (SNAPSHOT_CORRUPT) saying why when it is not one. */
export function readSnapshotFile(file: Buffer): SerializedState {
  let lines: Buffer;
  try {
    lines = gunzipSync(file);
  } catch (err) {
    throw new SnapshotError('SNAPSHOT_CORRUPT', `snapshot file: not a complete gzip stream (damaged, cut off or not a Caravan snapshot): ${(err as Error).message}`, { cause: err });
  }
  if (lines.length === 0) throw new SnapshotError('SNAPSHOT_CORRUPT', 'snapshot file: empty');
  // Nomad's own snapshots are gzipped tar archives: their first byte is a file name, not a JSON line.
  if (lines[0] !== 0x7b) throw new SnapshotError('SNAPSHOT_CORRUPT', 'snapshot file: not a Caravan snapshot (it does not start with a snapshot header line)');
  return decodeSnapshotSync(lines);
}
