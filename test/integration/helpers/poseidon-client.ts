/**
 * What a Nomad API client such as Poseidon does over the wire, for integration tests: follow
 * `/v1/event/stream`, run a command over the exec websocket frame by frame, poll until a
 * condition holds.
 */
import { StringDecoder } from 'node:string_decoder';
import { WebSocket } from 'ws';
import type { StreamEvent } from '../../../src/server/events/event.js';
import { JsonFrameDecoder } from '../../../src/http/json-frame-decoder.js';

/** Polls `fn` every 50 ms until it returns a truthy value; throws `what` after `timeoutMs`. */
export async function waitUntil<T>(what: string, fn: () => Promise<T | undefined | null | false> | T | undefined | null | false, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A live `/v1/event/stream` subscription collecting every event it receives. */
export interface EventWatch {
  events: StreamEvent[];
  /** Raw frames, heartbeats (`{}`) and error frames included. */
  frames: unknown[];
  /** Resolves the first received event (past or future) matching `pred`. */
  waitFor(what: string, pred: (e: StreamEvent) => boolean, timeoutMs?: number): Promise<StreamEvent>;
  close(): void;
}

/** Opens `/v1/event/stream?<query>` and collects its newline-delimited frames. */
export async function watchEvents(address: string, query = ''): Promise<EventWatch> {
  const ac = new AbortController();
  const res = await fetch(`${address}/v1/event/stream${query ? `?${query}` : ''}`, { signal: ac.signal });
  if (res.status !== 200 || !res.body) throw new Error(`event stream: status ${res.status}: ${await res.text()}`);
  const events: StreamEvent[] = [];
  const frames: unknown[] = [];
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  const jsonFrames = new JsonFrameDecoder();
  void (async () => {
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return;
        for (const frame of jsonFrames.pushParsed<{ Events?: StreamEvent[] }>(decoder.decode(value, { stream: true }))) {
          frames.push(frame);
          for (const e of frame.Events ?? []) events.push(e);
        }
      }
    } catch {
      // aborted by close()
    }
  })();
  return {
    events,
    frames,
    waitFor: (what, pred, timeoutMs = 20_000) => waitUntil(what, () => events.find(pred), timeoutMs),
    close: () => ac.abort(),
  };
}

/** The outcome of one exec session, frame by frame. */
export interface ExecOutcome {
  stdout: string;
  /** stdout as the bytes received (downloads). */
  stdoutBytes: Buffer;
  stderr: string;
  exitCode: number | null;
  /** Every server frame in order. */
  frames: Record<string, unknown>[];
}

/** Options of execFrames. */
export interface ExecFramesOptions {
  task: string;
  command: string[];
  tty?: boolean;
  /**
   * Written as stdin frames once the socket opens (in order, `delayMs` apart); a Buffer is sent
   * in 32 KiB frames, as a client copying a stream does; a `ttySize` is sent as a tty_size frame
   * (a terminal resized mid-session); at a `waitFor`, the rest waits until stdout matches it
   * (as a user types once the prompt or the program's output is there).
   */
  stdin?: Array<string | Buffer | { ttySize: { height: number; width: number } } | { waitFor: RegExp }>;
  delayMs?: number;
  /** Send `{"stdin":{"close":true}}` after the input (default true). */
  closeStdin?: boolean;
  /** Send a tty_size frame first. */
  size?: { height: number; width: number };
  timeoutMs?: number;
  /**
   * Closes the socket (as Poseidon does when an execution's time is up) once this holds for
   * what was received; the outcome then has no exit code.
   */
  abortWhen?: (out: ExecOutcome) => boolean;
}

/** Runs a command over `/v1/client/allocation/:id/exec` and collects its output frames. */
export function execFrames(address: string, allocId: string, opts: ExecFramesOptions): Promise<ExecOutcome> {
  const q = new URLSearchParams({ task: opts.task, command: JSON.stringify(opts.command), tty: String(opts.tty ?? false) });
  const url = `${address.replace(/^http/, 'ws')}/v1/client/allocation/${allocId}/exec?${q}`;
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url);
    const out: ExecOutcome = { stdout: '', stdoutBytes: Buffer.alloc(0), stderr: '', exitCode: null, frames: [] };
    const stdoutChunks: Buffer[] = [];
    const utf8 = new StringDecoder('utf8');
    let aborted = false;
    const timer = setTimeout(() => {
      ws.terminate();
      reject(new Error(`exec ${JSON.stringify(opts.command)} timed out; got ${JSON.stringify(out)}`));
    }, opts.timeoutMs ?? 20_000);
    ws.on('open', () => {
      void (async () => {
        const send = (f: unknown) => ws.send(JSON.stringify(f));
        if (opts.size) send({ tty_size: opts.size });
        for (const s of opts.stdin ?? []) {
          if (opts.delayMs) await new Promise((r) => setTimeout(r, opts.delayMs));
          if (typeof s !== 'string' && !Buffer.isBuffer(s)) {
            if ('ttySize' in s) send({ tty_size: s.ttySize });
            // A wait that never ends is the session's timeout, which reports what was received.
            else await waitUntil(`${s.waitFor} on stdout`, () => s.waitFor.test(out.stdout) || ws.readyState !== WebSocket.OPEN, opts.timeoutMs ?? 20_000).catch(() => {});
            continue;
          }
          const bytes = Buffer.from(s);
          for (let at = 0; at < bytes.length || at === 0; at += 32 * 1024) {
            send({ stdin: { data: bytes.subarray(at, at + 32 * 1024).toString('base64') } });
            if (bytes.length === 0) break;
          }
        }
        if (opts.closeStdin ?? true) send({ stdin: { close: true } });
      })();
    });
    ws.on('message', (data) => {
      const f = JSON.parse(String(data)) as Record<string, unknown>;
      out.frames.push(f);
      const dataOf = (k: string) => Buffer.from(((f[k] as { data?: string }).data ?? ''), 'base64').toString('utf8');
      if (f.stdout) {
        const b = Buffer.from(((f.stdout as { data?: string }).data ?? ''), 'base64');
        stdoutChunks.push(b);
        out.stdout += utf8.write(b);
      }
      if (f.stderr) out.stderr += dataOf('stderr');
      if (f.exited) out.exitCode = (f.result as { exit_code?: number } | undefined)?.exit_code ?? 0;
      if (!aborted && opts.abortWhen?.(out)) {
        aborted = true;
        ws.close();
      }
    });
    ws.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    ws.on('close', () => {
      clearTimeout(timer);
      out.stdout += utf8.end();
      out.stdoutBytes = Buffer.concat(stdoutChunks);
      resolve(out);
    });
  });
}
