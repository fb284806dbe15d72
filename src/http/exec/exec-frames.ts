/**
 * Nomad's exec streaming frame protocol (plugins/drivers/execstreaming.go, api/allocations_exec.go),
 * as JSON text messages over a websocket. Byte payloads are base64, as Go's encoding/json writes
 * a []byte.
 *
 *   client → server: {"stdin":{"data":"…"}} | {"stdin":{"close":true}} |
 *                    {"tty_size":{"height":H,"width":W}} | {} (heartbeat)
 *   server → client: {"stdout":{"data":"…"}} | {"stderr":{"data":"…"}} |
 *                    {"stdout":{"close":true}} | {"exited":true,"result":{"exit_code":N}}
 */
import { CaravanError } from '../../structs/caravan-error.js';

/** A stdin/stdout/stderr operation: some bytes, or the end of the stream. */
export interface ExecIoOperation {
  data?: string;
  close?: boolean;
}

/** The terminal size a tty session is resized to. */
export interface TerminalSize {
  height: number;
  width: number;
}

/** One message from the exec client. Every field is optional; `{}` is a heartbeat. */
export interface ExecInputFrame {
  stdin?: ExecIoOperation;
  tty_size?: TerminalSize;
}

/** One message to the exec client. */
export interface ExecOutputFrame {
  stdout?: ExecIoOperation;
  stderr?: ExecIoOperation;
  exited?: boolean;
  /** Nomad leaves exit_code out when it is 0 (Go's omitempty). */
  result?: { exit_code?: number };
}

/** Input that does not follow the frame protocol; `field` names the offending part. */
export class ExecFrameError extends CaravanError<'EXEC_BAD_FRAME'> {
  constructor(
    readonly field: string,
    reason: string,
  ) {
    super('EXEC_BAD_FRAME', { reason });
    this.name = 'ExecFrameError';
  }
}

/** What a decoded input frame asks for, with the stdin bytes already decoded. */
export interface ExecInput {
  stdinData?: Buffer;
  stdinClose: boolean;
  ttySize?: TerminalSize;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function parseSize(v: unknown): TerminalSize {
  if (!isRecord(v)) throw new ExecFrameError('tty_size', 'tty_size must be an object {height, width}');
  const { height, width } = v;
  for (const [name, n] of [['height', height], ['width', width]] as const) {
    if (typeof n !== 'number' || !Number.isInteger(n) || n < 0 || n > 65535) {
      throw new ExecFrameError(`tty_size.${name}`, `tty_size.${name} must be an integer between 0 and 65535`);
    }
  }
  return { height: height as number, width: width as number };
}

/** Decodes one text message from the client; throws ExecFrameError naming the bad field. */
export function parseExecInput(text: string): ExecInput {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new ExecFrameError('frame', 'exec frame is not valid JSON');
  }
  if (!isRecord(raw)) throw new ExecFrameError('frame', 'exec frame must be a JSON object');
  const out: ExecInput = { stdinClose: false };
  if (raw.stdin !== undefined && raw.stdin !== null) {
    if (!isRecord(raw.stdin)) throw new ExecFrameError('stdin', 'stdin must be an object {data, close}');
    const { data, close } = raw.stdin;
    if (data !== undefined && data !== null) {
      if (typeof data !== 'string') throw new ExecFrameError('stdin.data', 'stdin.data must be a base64 string');
      out.stdinData = Buffer.from(data, 'base64');
    }
    if (close !== undefined && close !== null && typeof close !== 'boolean') {
      throw new ExecFrameError('stdin.close', 'stdin.close must be a boolean');
    }
    out.stdinClose = close === true;
  }
  if (raw.tty_size !== undefined && raw.tty_size !== null) out.ttySize = parseSize(raw.tty_size);
  return out;
}

/** Encodes a chunk of output as a frame for `stream`. */
export function outputFrame(stream: 'stdout' | 'stderr', data: Buffer | string): string {
  const b64 = typeof data === 'string' ? Buffer.from(data).toString('base64') : data.toString('base64');
  return stream === 'stdout' ? `{"stdout":{"data":"${b64}"}}` : `{"stderr":{"data":"${b64}"}}`;
}

/** Encodes the end of an output stream. */
export function outputCloseFrame(stream: 'stdout' | 'stderr'): string {
  return stream === 'stdout' ? '{"stdout":{"close":true}}' : '{"stderr":{"close":true}}';
}

/** Encodes the final frame carrying the command's exit code. */
export function exitedFrame(exitCode: number): string {
  return `{"exited":true,"result":{"exit_code":${Math.trunc(exitCode)}}}`;
}

/** Encodes an input frame (used by the CLI and the benchmark). */
export function encodeExecInput(frame: ExecInputFrame): string {
  return JSON.stringify(frame);
}

/** Decodes a server frame (used by the CLI and the benchmark); unknown shapes become heartbeats. */
export function parseExecOutput(text: string): ExecOutputFrame {
  try {
    const v: unknown = JSON.parse(text);
    return isRecord(v) ? (v as ExecOutputFrame) : {};
  } catch {
    return {};
  }
}
