/**
 * Times a failover from a thread of its own: after `go()`, every 50 ms it sends a probe job
 * registration to each live server in turn, and polls them for a leader, until one
 * acknowledges the write. It runs in a worker thread because the bench's main thread also runs
 * the simulated clients: when they starve its event loop (seconds, on a loaded machine) a
 * probe there would time the simulator, not the servers.
 *
 * Times are wall-clock (Date.now()) so the main thread's kill and the worker's answers compare.
 */
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';

/** What the probe saw: when a live server first named a new leader and first acknowledged a write (epoch ms). */
export interface FailoverProbeResult {
  leaderNamedAt: number;
  firstWriteAt: number;
  /** Each write attempt: the server, when it was sent and answered (epoch ms), the status (0: no answer) and its error text. */
  attempts: { server: string; sentAt: number; answeredAt: number; status: number; error: string }[];
}

interface ProbeData {
  /** "http://host:port" of the servers left alive. */
  live: string[];
  /** The killed leader's "host:port" (a server still naming it names no new leader). */
  killed: string;
  /** The probe job's registration body. */
  job: unknown;
  timeoutMs: number;
}

/** A started probe: `go()` once the leader is killed resolves what it saw. */
export interface FailoverProbe {
  go(): Promise<FailoverProbeResult>;
}

/** Starts the worker (before the kill, so its start-up is not timed). */
export async function startFailoverProbe(data: ProbeData): Promise<FailoverProbe> {
  const worker = new Worker(new URL(import.meta.url), { workerData: data });
  await new Promise<void>((resolve, reject) => {
    worker.once('message', () => resolve());
    worker.once('error', reject);
  });
  return {
    go() {
      const done = new Promise<FailoverProbeResult>((resolve, reject) => {
        worker.once('message', (r: FailoverProbeResult | { error: string }) => ('error' in r ? reject(new Error(r.error)) : resolve(r)));
        worker.once('error', reject);
      });
      worker.postMessage('go');
      return done.finally(() => void worker.terminate());
    },
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function probe(d: ProbeData): Promise<FailoverProbeResult> {
  const start = Date.now();
  let leaderNamedAt = -1;
  let firstWriteAt = -1;
  const named = (async () => {
    while (leaderNamedAt < 0 && firstWriteAt < 0) {
      for (const s of d.live) {
        const r = await fetch(`${s}/v1/status/leader`).catch(() => null);
        const leader = r?.status === 200 ? ((await r.json()) as string) : '';
        if (leader !== '' && leader !== d.killed && leaderNamedAt < 0) leaderNamedAt = Date.now();
      }
      await sleep(20);
    }
  })();
  const attempts: FailoverProbeResult['attempts'] = [];
  for (let k = 0; firstWriteAt < 0; k++) {
    const s = d.live[k % d.live.length]!;
    const sentAt = Date.now();
    const r = await fetch(`${s}/v1/jobs`, { method: 'PUT', body: JSON.stringify(d.job), headers: { 'content-type': 'application/json' } }).catch(() => null);
    const body = (await r?.text().catch(() => '')) ?? '';
    attempts.push({ server: s.replace(/^http:\/\//, ''), sentAt, answeredAt: Date.now(), status: r?.status ?? 0, error: r?.status === 200 ? '' : body.slice(0, 80) });
    if (r?.status === 200) firstWriteAt = Date.now();
    else if (Date.now() - start > d.timeoutMs) throw new Error(`no write acknowledged within ${d.timeoutMs} ms of the kill`);
    else await sleep(50);
  }
  await named;
  // A write acknowledged means a leader: named no later than then.
  return { leaderNamedAt: leaderNamedAt < 0 ? firstWriteAt : leaderNamedAt, firstWriteAt, attempts };
}

if (!isMainThread && parentPort) {
  const port = parentPort;
  port.once('message', () => {
    probe(workerData as ProbeData).then(
      (r) => port.postMessage(r),
      (err: unknown) => port.postMessage({ error: err instanceof Error ? err.message : String(err) }),
    );
  });
  port.postMessage('ready');
}
