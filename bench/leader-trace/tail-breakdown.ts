/**
 * Splits the slow job registrations of a nodesim run (scenario 4) into where they waited:
 *
 *   node dist/bench/leader-trace/tail-breakdown.js <prober log> <server trace> [threshold ms, 50]
 *
 * The prober's log (`NODESIM_PROBE_LOG`) has `reg <start> <ms>` per registration, the server's
 * trace (loop-trace.ts) `req`, `gc` and `lag` lines. For each registration over the threshold:
 * the time before the server's handler saw it (and how much of that its event loop ran late),
 * the time in the handler (and how much of it a GC pause took), and the time after (the answer's
 * way back to the prober's thread). Both clocks are the machine's wall clock.
 */
import { readFileSync } from 'node:fs';

interface Span {
  start: number;
  ms: number;
}

function spans(text: string, kind: string): Span[] {
  const out: Span[] = [];
  for (const l of text.split('\n')) {
    const [k, start, ms] = l.split(' ');
    if (k === kind && start && ms) out.push({ start: Number(start), ms: Number(ms) });
  }
  return out.sort((a, b) => a.start - b.start);
}

/** How much of [from, to) the spans cover. */
function overlap(list: Span[], from: number, to: number): number {
  let sum = 0;
  for (const s of list) sum += Math.max(0, Math.min(s.start + s.ms, to) - Math.max(s.start, from));
  return sum;
}

const pct = (part: number, whole: number): string => (whole > 0 ? `${((100 * part) / whole).toFixed(0)} %` : '-');

function main(): void {
  const [proberLog, serverTrace, thresholdArg] = process.argv.slice(2);
  if (!proberLog || !serverTrace) throw new Error('usage: tail-breakdown <prober log> <server trace> [threshold ms]');
  const threshold = Number(thresholdArg ?? 50);
  const trace = readFileSync(serverTrace, 'utf8');
  const regs = spans(readFileSync(proberLog, 'utf8'), 'reg');
  const reqs = spans(trace, 'req');
  const gcs = spans(trace, 'gc');
  const lags = spans(trace, 'lag');
  let total = 0, before = 0, beforeLate = 0, inServer = 0, inServerGc = 0, unmatched = 0;
  const slow = regs.filter((r) => r.ms > threshold);
  for (const r of slow) {
    total += r.ms;
    const req = reqs.find((q) => q.start >= r.start - 5 && q.start <= r.start + r.ms);
    if (!req) {
      unmatched++;
      continue;
    }
    const seen = Math.max(r.start, req.start);
    before += seen - r.start;
    beforeLate += overlap(lags, r.start, seen);
    inServer += req.ms;
    inServerGc += overlap(gcs, req.start, req.start + req.ms);
  }
  const after = total - before - inServer;
  console.log(`${slow.length} of ${regs.length} registrations over ${threshold} ms, ${total.toFixed(0)} ms in all${unmatched ? ` (${unmatched} not found in the server's trace)` : ''}`);
  console.log(`  before the server's handler saw them: ${before.toFixed(0)} ms (${pct(before, total)}); the server's loop running late meanwhile: ${beforeLate.toFixed(0)} ms`);
  console.log(`  in the handler (admission, the log commit, the answer): ${inServer.toFixed(0)} ms (${pct(inServer, total)}); GC pauses in it: ${inServerGc.toFixed(0)} ms`);
  console.log(`  after (the answer's way back to the prober): ${after.toFixed(0)} ms (${pct(after, total)})`);
  const inWindow = (s: Span): boolean => regs.length > 0 && s.start >= regs[0]!.start && s.start <= regs.at(-1)!.start + 1000;
  const g = gcs.filter(inWindow);
  const seconds = regs.length > 0 ? (regs.at(-1)!.start + 1000 - regs[0]!.start) / 1000 : 0;
  console.log(`  over the ${seconds.toFixed(0)} s: ${g.length} GC pauses over 3 ms (${g.reduce((a, s) => a + s.ms, 0).toFixed(0)} ms, longest ${Math.max(0, ...g.map((s) => s.ms)).toFixed(0)} ms); ${lags.filter(inWindow).length} times the loop ran over 15 ms late`);
}

main();
