/**
 * Scenario 4's job registrations, timed on a thread of their own. The simulator's thread runs
 * the timers, watches and task runners of every simulated node and is often late by hundreds of
 * milliseconds under load (its event-loop delay is printed); a registration timed there counts
 * that lateness as the server's. Here nothing else runs on the timing thread, so a latency is
 * the request's round trip to the leader (and the CPU it waits for on a shared machine).
 *
 * `runRegistrationProber` starts the worker and resolves with the latencies (ms, in submission
 * order) of one registration a second for `seconds`; a registration the server refuses rejects.
 * With `NODESIM_PROBE_LOG=<file>` each is also appended there as `reg <start, ms since the epoch>
 * <ms>`, to set beside a server's trace (bench/leader-trace).
 */
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { fileURLToPath } from 'node:url';
import { appendFileSync } from 'node:fs';
import { SIM_DATACENTERS } from './simulated-node.js';

interface ProberInput {
  /** "http://host:port" of the leader. */
  addr: string;
  seconds: number;
}

const PROBE_LOG = process.env['NODESIM_PROBE_LOG'];

type ProberMessage = { latencies: number[] } | { error: string };

/** Scenario 4's job `i`: 10 allocations of a 30 s mock task, so allocations keep ending and being replaced. */
function steadyJob(i: number): unknown {
  return {
    Job: {
      ID: `nodesim-steady-${i}`,
      Name: `nodesim-steady-${i}`,
      Type: 'batch',
      Datacenters: [...SIM_DATACENTERS],
      NodePool: 'all',
      TaskGroups: [{ Name: 'g', Count: 10, Tasks: [{ Name: 't', Driver: 'mock_driver', Config: { run_for: '30s' }, Resources: { CPU: 10, MemoryMB: 10 } }] }],
    },
  };
}

async function probe({ addr, seconds }: ProberInput): Promise<number[]> {
  const latencies: number[] = [];
  const t0 = performance.now();
  for (let i = 0; performance.now() - t0 < seconds * 1000; i++) {
    const body = JSON.stringify(steadyJob(i));
    const tick = performance.now();
    const res = await fetch(`${addr}/v1/jobs`, { method: 'PUT', body, headers: { 'Content-Type': 'application/json' } });
    const text = await res.text();
    latencies.push(performance.now() - tick);
    if (PROBE_LOG) appendFileSync(PROBE_LOG, `reg ${(performance.timeOrigin + tick).toFixed(0)} ${(performance.now() - tick).toFixed(1)}\n`);
    if (res.status !== 200) throw new Error(`registering nodesim-steady-${i}: ${res.status} ${text}`);
    await new Promise((r) => setTimeout(r, Math.max(0, 1000 - (performance.now() - tick))));
  }
  return latencies;
}

/** See the file comment. */
export function runRegistrationProber(addr: string, seconds: number): Promise<number[]> {
  return new Promise((resolve, reject) => {
    const w = new Worker(fileURLToPath(import.meta.url), { workerData: { addr, seconds } satisfies ProberInput });
    w.once('message', (m: ProberMessage) => ('error' in m ? reject(new Error(m.error)) : resolve(m.latencies)));
    w.once('error', reject);
    w.once('exit', (code) => reject(new Error(`registration prober exited (code ${code}) without an answer`)));
  });
}

if (!isMainThread && parentPort) {
  const port = parentPort;
  probe(workerData as ProberInput).then(
    (latencies) => port.postMessage({ latencies } satisfies ProberMessage),
    (err: unknown) => port.postMessage({ error: err instanceof Error ? err.message : String(err) } satisfies ProberMessage),
  );
}
