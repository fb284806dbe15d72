/**
 * The agent's metrics: a prom-client registry per HTTP server (so several agents in one test
 * process do not collide) with request counters and durations and gauges read from the state
 * at scrape time. Rendered as Prometheus text or as Nomad's JSON metrics summary.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { ServerApi } from '../server/server-api.js';
import type { LogStorageStatus } from '../server/log/log-backend.js';

/** How long a scrape waits for etcd's figures before leaving them out. */
const STORAGE_STATUS_TIMEOUT_MS = 1000;

/** The metrics of one HTTP server. */
export class HttpMetrics {
  readonly registry = new Registry();
  private readonly requests: Counter<'method' | 'route' | 'code'>;
  private readonly durations: Histogram<'method' | 'route'>;

  constructor(server: () => ServerApi | undefined) {
    this.requests = new Counter({
      name: 'caravan_http_requests_total',
      help: 'HTTP API requests answered, by method, route and status code.',
      labelNames: ['method', 'route', 'code'],
      registers: [this.registry],
    });
    this.durations = new Histogram({
      name: 'caravan_http_request_duration_seconds',
      help: 'Time to answer HTTP API requests (blocking queries included).',
      labelNames: ['method', 'route'],
      buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 30, 300],
      registers: [this.registry],
    });
    const stateGauge = (name: string, help: string, count: (s: ServerApi) => number) =>
      new Gauge({
        name,
        help,
        registers: [this.registry],
        collect() {
          const s = server();
          if (s) this.set(count(s));
        },
      });
    stateGauge('caravan_state_index', 'The latest applied log index.', (s) => s.state.latestIndex());
    stateGauge('caravan_state_jobs', 'Jobs in the state store (all namespaces).', (s) => s.state.jobs('*').length);
    stateGauge('caravan_state_nodes', 'Client nodes in the state store.', (s) => s.state.nodes().length);
    stateGauge('caravan_state_allocations', 'Allocations in the state store.', (s) => s.state.allocs().length);
    stateGauge('caravan_state_evaluations', 'Evaluations in the state store.', (s) => s.state.evals().length);
    stateGauge('caravan_state_watch_wakeups', 'Blocked queries and watches woken by a change since the server started (a write wakes only the watches of what it changed).', (s) => s.state.watchWakeups?.() ?? 0);
    // Nomad's own names beside Caravan's, for dashboards built on Nomad's telemetry.
    const nomadGauge = (nomadName: string, help: string, read: (s: ServerApi) => number) => {
      const promName = nomadName.replace(/\./g, '_');
      this.nomadNames.set(promName, nomadName);
      stateGauge(promName, help, read);
    };
    const jobsWith = (status: string) => (s: ServerApi) => s.state.jobs('*').filter((j) => j.Status === status).length;
    nomadGauge('nomad.nomad.job_status.pending', 'Jobs pending (Nomad name).', jobsWith('pending'));
    nomadGauge('nomad.nomad.job_status.running', 'Jobs running (Nomad name).', jobsWith('running'));
    nomadGauge('nomad.nomad.job_status.dead', 'Jobs dead (Nomad name).', jobsWith('dead'));
    nomadGauge('nomad.nomad.blocked_evals.total_blocked', 'Evaluations blocked on resources (Nomad name).', (s) => s.state.evals().filter((e) => e.Status === 'blocked').length);
    nomadGauge('nomad.client.introduction_violation_num', 'Node registrations without a valid introduction token since the server started, logged or not (Nomad name).', (s) => s.clientIntroduction?.violations?.() ?? 0);
    nomadGauge('nomad.nomad.heartbeat.active', 'Nodes with a live heartbeat (Nomad name).', (s) => s.state.nodes().filter((n) => n.Status !== 'down').length);
    this.registerLogStorageGauges(server);
    new Gauge({
      name: 'nomad_runtime_alloc_bytes',
      help: 'Heap bytes in use by the agent process (Nomad name).',
      registers: [this.registry],
      collect() {
        this.set(process.memoryUsage().heapUsed);
      },
    });
    this.nomadNames.set('nomad_runtime_alloc_bytes', 'nomad.runtime.alloc_bytes');
    this.registerEventLoopDelay();
  }

  /**
   * How late the agent's event loop ran since the previous scrape (p50, p99, max): every request,
   * heartbeat and apply of the process waits out a synchronous stretch, so this tells a slow
   * answer caused here from one caused by the network or a starved machine. Reset at each scrape,
   * as prom-client's own event-loop metrics are (one scraper per agent, as the bench has it); the
   * first 10 ms interval after a reset goes unrecorded (Node's histogram starts over from it).
   */
  private registerEventLoopDelay(): void {
    // Sampled by an unref'd libuv timer every 10 ms (it keeps no process alive); the histogram
    // holds each interval as it ran, so lateness is what exceeds the 10 ms.
    const resolutionMs = 10;
    const delay = monitorEventLoopDelay({ resolution: resolutionMs });
    delay.enable();
    new Gauge({
      name: 'caravan_runtime_event_loop_delay_seconds',
      help: 'How late the event loop ran since the previous scrape (stat: p50, p99, max).',
      labelNames: ['stat'],
      registers: [this.registry],
      collect() {
        // Empty before its first sample (percentile() answers 0).
        const s = (ns: number) => (delay.count > 0 ? Math.max(0, ns / 1e6 - resolutionMs) / 1000 : 0);
        this.set({ stat: 'p50' }, s(delay.percentile(50)));
        this.set({ stat: 'p99' }, s(delay.percentile(99)));
        this.set({ stat: 'max' }, s(delay.max));
        delay.reset();
      },
    });
  }

  /**
   * etcd's footprint, read from etcd at scrape time (its Status call and a count of the
   * cluster's keys): labelled by the cluster prefix, and absent on a server without etcd or while
   * etcd does not answer within STORAGE_STATUS_TIMEOUT_MS (a scrape never waits on an outage).
   */
  private registerLogStorageGauges(server: () => ServerApi | undefined): void {
    let pending: Promise<LogStorageStatus | null> | null = null;
    // One etcd read per scrape, shared by the three gauges.
    const read = async (): Promise<LogStorageStatus | null> => {
      pending ??= (async () => {
        const s = server();
        if (!s?.logStorageStatus) return null;
        let timer: NodeJS.Timeout | undefined;
        const timeout = new Promise<null>((r) => (timer = setTimeout(() => r(null), STORAGE_STATUS_TIMEOUT_MS)));
        try {
          return await Promise.race([s.logStorageStatus().catch(() => null), timeout]);
        } finally {
          clearTimeout(timer);
        }
      })().finally(() => setImmediate(() => (pending = null)));
      return pending;
    };
    const gauge = (name: string, help: string, value: (s: LogStorageStatus) => number | undefined) =>
      new Gauge({
        name,
        help,
        labelNames: ['prefix'],
        registers: [this.registry],
        async collect() {
          this.reset();
          const s = await read();
          const v = s ? value(s) : undefined;
          if (s && v !== undefined) this.set({ prefix: s.prefix }, v);
        },
      });
    gauge('caravan_etcd_db_size_bytes', "etcd's database file (its quota counts this; free pages included until a defragmentation).", (s) => s.dbSizeBytes);
    gauge('caravan_etcd_db_size_in_use_bytes', "The part of etcd's database in use.", (s) => s.dbSizeInUseBytes);
    gauge('caravan_etcd_keys', "Keys under the cluster's etcd prefix.", (s) => s.keys);
  }

  /** Prometheus name → Nomad's dotted name, for metrics whose Nomad name has underscores in a segment. */
  private readonly nomadNames = new Map<string, string>();

  /** Records one answered request. */
  observe(method: string, route: string, code: number, seconds: number): void {
    this.requests.inc({ method, route, code: String(code) });
    this.durations.observe({ method, route }, seconds);
  }

  /** The Prometheus text exposition. */
  prometheus(): Promise<string> {
    return this.registry.metrics();
  }

  /** Nomad's JSON shape: {Timestamp, Gauges, Counters, Samples, Points}. */
  async json(now: Date): Promise<Record<string, unknown>> {
    const metrics = await this.registry.getMetricsAsJSON();
    const gauges: Record<string, unknown>[] = [];
    const counters: Record<string, unknown>[] = [];
    const samples: Record<string, unknown>[] = [];
    for (const m of metrics) {
      const name = this.nomadNames.get(m.name) ?? m.name.replace(/_/g, '.');
      const type = String(m.type);
      if (type === 'gauge') {
        for (const v of m.values) gauges.push({ Name: name, Value: v.value, Labels: v.labels });
      } else if (type === 'counter') {
        for (const v of m.values) counters.push({ Name: name, Count: v.value, Sum: v.value, Labels: v.labels });
      } else if (type === 'histogram') {
        for (const v of m.values as { value: number; labels: object; metricName?: string }[]) {
          if (v.metricName?.endsWith('_sum')) samples.push({ Name: name, Sum: v.value, Labels: v.labels });
        }
      }
    }
    return { Timestamp: now.toISOString(), Gauges: gauges, Counters: counters, Samples: samples, Points: [] };
  }
}
