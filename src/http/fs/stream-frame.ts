/**
 * Nomad's StreamFrame (api/fs.go), the unit of `/v1/client/fs/logs` and `/fs/stream` in framed
 * mode: JSON objects back to back, nothing between them (Nomad's encoder writes no newline, and
 * clients such as Nomad's web UI split on `}{`). Every field is omitted when empty, so a
 * heartbeat frame is `{}`. Offset is the position in File just after Data.
 */

/** File events Nomad reports in a frame instead of data. */
export const FileEvent = {
  Truncated: 'file truncated',
  Deleted: 'file deleted',
} as const;
export type FileEvent = (typeof FileEvent)[keyof typeof FileEvent];

/** A piece of a streamed file. */
export interface StreamChunk {
  /** Path relative to the allocation directory, e.g. "alloc/logs/web.stdout.0". */
  file: string;
  /** Offset in `file` just after `data`. */
  offset: number;
  data: Buffer;
  event?: FileEvent;
}

/** The JSON shape of a frame, as decoded by clients. */
export interface StreamFrameJson {
  Offset?: number;
  Data?: string;
  File?: string;
  FileEvent?: string;
}

/** Nomad sends a heartbeat frame every second so a dead peer is noticed. */
export const STREAM_HEARTBEAT_MS = 1000;
/** Nomad's maximum frame payload. */
export const STREAM_FRAME_SIZE = 64 * 1024;

/** Encodes one chunk as a frame. */
export function encodeStreamFrame(chunk: StreamChunk): string {
  const f: StreamFrameJson = {};
  if (chunk.offset !== 0) f.Offset = chunk.offset;
  if (chunk.data.length > 0) f.Data = chunk.data.toString('base64');
  if (chunk.file !== '') f.File = chunk.file;
  if (chunk.event) f.FileEvent = chunk.event;
  return JSON.stringify(f);
}

/** The heartbeat frame. */
export const HEARTBEAT_FRAME = '{}';
