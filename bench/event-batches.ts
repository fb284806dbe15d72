/**
 * The batches of an event stream (`GET /v1/event/stream`) as they are read, each with the time
 * its chunk arrived; heartbeats (`{}`) are skipped. The stream is framed as Nomad frames it —
 * JSON objects back to back, nothing required between them — so it is split by the same decoder
 * the CLI uses, never on newlines. For the benchmarks that time a change until the stream reports it.
 */
import { performance } from 'node:perf_hooks';
import { JsonFrameDecoder } from '../src/http/json-frame-decoder.js';
import type { Allocation } from '../src/structs/alloc.js';

/** What the benchmarks read of an event. */
export interface BenchEvent {
  Type: string;
  Index?: number;
  Payload: { Allocation?: Allocation };
}

export async function* eventBatches(body: ReadableStream<Uint8Array>): AsyncGenerator<{ events: BenchEvent[]; at: number }> {
  const reader = body.getReader();
  const text = new TextDecoder();
  const frames = new JsonFrameDecoder();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    const at = performance.now();
    for (const frame of frames.push(text.decode(value, { stream: true }))) {
      const batch = JSON.parse(frame) as { Events?: BenchEvent[] };
      if (batch.Events) yield { events: batch.Events, at };
    }
  }
}
