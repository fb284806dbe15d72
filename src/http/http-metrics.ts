/**
 * The agent's metrics: a prom-client registry per HTTP server (so several agents in one test
 * process do not collide) with request counters and durations and gauges read from the state
 * at scrape time. Rendered as Prometheus text or as Nomad's JSON metrics summary.
 */
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { ServerApi } from '../server/server-api.js';

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
    nomadGauge('nomad.nomad.heartbeat.active', 'Nodes with a live heartbeat (Nomad name).', (s) => s.state.nodes().filter((n) => n.Status !== 'down').length);
    new Gauge({
      name: 'nomad_runtime_alloc_bytes',
      help: 'Heap bytes in use by the agent process (Nomad name).',
      registers: [this.registry],
      collect() {
        this.set(process.memoryUsage().heapUsed);
      },
    });
    this.nomadNames.set('nomad_runtime_alloc_bytes', 'nomad.runtime.alloc_bytes');
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
