/**
 * The batches of an event stream (`GET /v1/event/stream`, newline-delimited JSON) as they are
 * read, each with the time its chunk arrived; heartbeats (`{}`) are skipped. For the benchmarks
 * that time a change until the stream reports it.
 */
import { performance } from 'node:perf_hooks';
import type { Allocation } from '../src/structs/alloc.js';

/** What the benchmarks read of an event. */
export interface BenchEvent {
  Type: string;
  Index?: number;
  Payload: { Allocation?: Allocation };
}

export async function* eventBatches(body: ReadableStream<Uint8Array>): AsyncGenerator<{ events: BenchEvent[]; at: number }> {
  const reader = body.getReader();
  let buf = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    const at = performance.now();
    buf += Buffer.from(value).toString();
    let nl: number;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, nl).trim();
      buf = buf.slice(nl + 1);
      if (!line) continue;
      const batch = JSON.parse(line) as { Events?: BenchEvent[] };
      if (batch.Events) yield { events: batch.Events, at };
    }
  }
}
