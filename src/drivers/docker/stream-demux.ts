/**
 * The engine's multiplexed stream format (non-tty logs, attach and exec): frames of an 8-byte
 * header — stream type (0 stdin, 1 stdout, 2 stderr), three zero bytes, big-endian payload
 * length — followed by the payload. Frames may be split across reads, so bytes are buffered.
 */

/** Which stream a frame belongs to. */
export type StreamName = 'stdout' | 'stderr';

/** Feeds raw bytes in, calls `onFrame` for each complete frame. */
export class StreamDemuxer {
  private pending: Buffer = Buffer.alloc(0);

  constructor(private readonly onFrame: (stream: StreamName, payload: Buffer) => void) {}

  push(chunk: Buffer): void {
    let buf = this.pending.length > 0 ? Buffer.concat([this.pending, chunk]) : chunk;
    while (buf.length >= 8) {
      const len = buf.readUInt32BE(4);
      if (buf.length < 8 + len) break;
      const kind = buf[0];
      const payload = buf.subarray(8, 8 + len);
      this.onFrame(kind === 2 ? 'stderr' : 'stdout', payload);
      buf = buf.subarray(8 + len);
    }
    this.pending = buf.length > 0 ? Buffer.from(buf) : Buffer.alloc(0);
  }
}
