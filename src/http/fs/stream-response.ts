/**
 * Writes a sequence of file chunks as the body of a streaming response: framed (Nomad's
 * StreamFrame lines, with a heartbeat frame every second while idle) or plain (raw bytes).
 * Each frame is written as soon as it is read; the client closing the connection ends the
 * sequence.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { encodeStreamFrame, HEARTBEAT_FRAME, STREAM_HEARTBEAT_MS, type StreamChunk } from './stream-frame.js';

/** How the chunks are put on the wire. */
export interface StreamResponseOptions {
  plain: boolean;
  heartbeatMs?: number;
}

/**
 * Hijacks `reply` and streams what `produce(signal)` yields. Errors thrown before the first
 * chunk must be raised by the caller beforehand (the status line is sent at once).
 */
export async function streamChunks(
  req: FastifyRequest,
  reply: FastifyReply,
  produce: (signal: AbortSignal) => AsyncIterable<StreamChunk>,
  opts: StreamResponseOptions,
): Promise<void> {
  const ac = new AbortController();
  reply.hijack();
  const raw = reply.raw;
  raw.writeHead(200, {
    'Content-Type': opts.plain ? 'text/plain; charset=utf-8' : 'application/json',
    'Cache-Control': 'no-cache',
  });
  raw.flushHeaders();
  const onClose = () => ac.abort();
  raw.on('close', onClose);
  req.raw.on('close', () => {
    if (!raw.writableFinished) ac.abort();
  });
  const heartbeat = opts.plain
    ? undefined
    : setInterval(() => {
        if (!raw.destroyed) raw.write(HEARTBEAT_FRAME);
      }, opts.heartbeatMs ?? STREAM_HEARTBEAT_MS);
  heartbeat?.unref();
  try {
    for await (const chunk of produce(ac.signal)) {
      if (raw.destroyed) break;
      const ok = opts.plain ? (chunk.data.length > 0 ? raw.write(chunk.data) : true) : raw.write(encodeStreamFrame(chunk));
      if (!ok) await new Promise<void>((resolve) => { raw.once('drain', resolve); raw.once('close', resolve); });
    }
  } catch (err) {
    // Headers are gone; all that is left is to cut the stream so the client sees it failed.
    req.log?.warn?.({ err }, 'file stream failed');
    raw.destroy();
    return;
  } finally {
    if (heartbeat) clearInterval(heartbeat);
    raw.off('close', onClose);
    ac.abort();
  }
  if (!raw.destroyed) raw.end();
}
