/**
 * The recorded workload of a fault run: writers register small jobs (one register per job: a
 * unique value in Meta), readers read them back from every server with and without ?stale, and
 * an observer asks every server every 100 ms whether it leads and in which term. Every
 * operation is kept with its call and return times (performance.now()), and an answer that never
 * came (a timeout, a 5xx) leaves a write's outcome unknown.
 */
import { performance } from 'node:perf_hooks';
import type { RegisterOp } from './register-linearizability.js';
import type { SeededRandom } from './seeded-random.js';

/** A server's claim about leadership, as one /v1/agent/self answered it. */
export interface LeaderObservation {
  server: string;
  leader: boolean;
  /** The term it named ("" when it knew no leader). */
  term: string;
  call: number;
  ret: number;
}

/** A non-linearizable read (?stale), kept for its value only. */
export interface StaleRead {
  key: string;
  value: string | null;
  server: string;
}

export interface WorkloadHistory {
  ops: RegisterOp[];
  staleReads: StaleRead[];
  observations: LeaderObservation[];
  /** Writes answered 200. */
  acked: number;
  /** Writes whose outcome is unknown (no answer, 5xx). */
  unknown: number;
  /** Reads answered (with and without ?stale). */
  reads: number;
}

/** A small job whose only payload is the register's value. Count 0: nothing to place. */
export function registerJob(id: string, value: string): unknown {
  return {
    Job: {
      ID: id,
      Name: id,
      Type: 'service',
      Datacenters: ['dc1'],
      Meta: { v: value },
      TaskGroups: [{ Name: 'g', Count: 0, Tasks: [{ Name: 't', Driver: 'raw_exec', Config: { command: '/bin/true' }, Resources: { CPU: 10, MemoryMB: 16 } }] }],
    },
  };
}

/** One HTTP call with a deadline; null when it failed without an answer. */
export async function call(address: string, method: string, path: string, body?: unknown, timeoutMs = 8000): Promise<{ status: number; body: unknown } | null> {
  try {
    const res = await fetch(`${address}${path}`, {
      method,
      signal: AbortSignal.timeout(timeoutMs),
      ...(body !== undefined ? { body: JSON.stringify(body), headers: { 'Content-Type': 'application/json' } } : {}),
    });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // a plain-text error
    }
    return { status: res.status, body: parsed };
  } catch {
    return null;
  }
}

/** The value a job read answered: its Meta.v, null for 404; undefined when the read failed. */
export function readValue(res: { status: number; body: unknown } | null): string | null | undefined {
  if (!res) return undefined;
  if (res.status === 404) return null;
  if (res.status !== 200) return undefined;
  const v = (res.body as { Meta?: Record<string, string> } | null)?.Meta?.['v'];
  return typeof v === 'string' ? v : undefined;
}

export interface WorkloadOptions {
  random: SeededRandom;
  /** The servers' addresses now reachable (paused and killed ones left out by the caller). */
  servers: () => { name: string; address: string }[];
  /** The keys operations go to now (a fault round uses fresh ones: small histories). */
  keys: () => string[];
  writers: number;
  readers: number;
  /** Pause between one worker's operations (ms). */
  thinkMs: number;
}

/** Runs the workload until stop(); the history grows meanwhile. */
export class Workload {
  readonly history: WorkloadHistory = { ops: [], staleReads: [], observations: [], acked: 0, unknown: 0, reads: 0 };
  private running = true;
  private readonly loops: Promise<void>[] = [];
  private seq = 0;

  constructor(private readonly o: WorkloadOptions) {
    for (let w = 0; w < o.writers; w++) this.loops.push(this.writer(w));
    for (let r = 0; r < o.readers; r++) this.loops.push(this.reader(r));
    this.loops.push(this.observer());
  }

  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.loops);
  }

  private async writer(w: number): Promise<void> {
    while (this.running) {
      const target = this.pickServer();
      const key = this.o.random.pick(this.o.keys());
      if (target) {
        const value = `w${w}-${++this.seq}`;
        const t0 = performance.now();
        const res = await call(target.address, 'PUT', '/v1/jobs', registerJob(key, value));
        const t1 = performance.now();
        if (res?.status === 200) {
          this.history.acked++;
          this.history.ops.push({ key, kind: 'write', value, call: t0, ret: t1 });
        } else if (res && res.status === 500 && /No cluster leader/.test(String(res.body))) {
          // Refused before anything was proposed: no leader to propose it to.
        } else if (!res || res.status >= 500) {
          // Maybe committed: it may take effect at any time after its call, or never.
          this.history.unknown++;
          this.history.ops.push({ key, kind: 'write', value, call: t0, ret: Infinity });
        }
      }
      await sleep(this.o.thinkMs);
    }
  }

  private async reader(r: number): Promise<void> {
    while (this.running) {
      const target = this.pickServer();
      const key = this.o.random.pick(this.o.keys());
      if (target) {
        // Every other read of reader 0 is ?stale (answered by any server from its own state).
        const stale = r === 0 && this.o.random.next() < 0.5;
        const t0 = performance.now();
        const value = readValue(await call(target.address, 'GET', `/v1/job/${key}${stale ? '?stale' : ''}`));
        const t1 = performance.now();
        if (value !== undefined) {
          this.history.reads++;
          if (stale) this.history.staleReads.push({ key, value, server: target.name });
          else this.history.ops.push({ key, kind: 'read', value, call: t0, ret: t1 });
        }
      }
      await sleep(this.o.thinkMs);
    }
  }

  private async observer(): Promise<void> {
    while (this.running) {
      await Promise.all(
        this.o.servers().map(async (s) => {
          const t0 = performance.now();
          const res = await call(s.address, 'GET', '/v1/agent/self', undefined, 2000);
          const t1 = performance.now();
          const raft = (res?.body as { stats?: { raft?: { state?: string; term?: string } } } | undefined)?.stats?.raft;
          if (res?.status === 200 && raft) this.history.observations.push({ server: s.name, leader: raft.state === 'Leader', term: raft.term ?? '', call: t0, ret: t1 });
        }),
      );
      await sleep(100);
    }
  }

  private pickServer(): { name: string; address: string } | undefined {
    const live = this.o.servers();
    return live.length > 0 ? this.o.random.pick(live) : undefined;
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
