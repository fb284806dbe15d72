/**
 * Runs the http and tcp checks of an allocation's registered native services (Nomad's nsd
 * checks): one loop per check, probing every `interval` with the check's `timeout`, from the
 * moment its service is registered until it is not. Keeps each check's latest result in
 * Nomad's CheckQueryResult shape (GET /v1/client/allocation/:id/checks), tells the alloc runner
 * when a check_restart asks for its task to restart, and whether every check passes (a
 * deployment's `health_check = "checks"`).
 */
import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import { nanosToMs } from '../../structs/duration.js';
import type { ServiceCheck } from '../../structs/service.js';
import type { Clock } from '../../time/clock.js';
import type { ActiveService } from './alloc-service-registrations.js';
import { CheckStatus, probeCheck, type ProbeResult } from './check-probe.js';
import { CheckRestartTracker } from './check-restart.js';

/** Nomad's CheckQueryResult. */
export interface CheckQueryResult {
  ID: string;
  Mode: 'healthiness' | 'readiness';
  Status: CheckStatus;
  StatusCode?: number;
  Output: string;
  /** Unix seconds. */
  Timestamp: number;
  Group: string;
  Task?: string;
  Service: string;
  Check: string;
}

/** What the runner needs from its allocation. */
export interface AllocCheckRunnerConfig {
  allocId: string;
  group: string;
  clock: Clock;
  logger: Logger;
  /** A check_restart asks `task` to restart (counted as a failure against its restart policy). */
  onRestart: (task: string, reason: string) => void;
  /** A check's status changed (the deployment health tracker listens). */
  onChange: () => void;
}

/** The probe a check runs; replaced in tests. */
export type Prober = (check: ServiceCheck, target: { address: string; port: number; timeoutMs: number }) => Promise<ProbeResult>;

interface RunningCheck {
  stop: AbortController;
  /** What the loop was started for; a change of target starts it again. */
  fingerprint: string;
}

/** Checks the client runs itself; grpc and script are left to later work (their results stay absent). */
const RUN_TYPES = new Set(['http', 'tcp']);

export class AllocCheckRunner {
  private readonly running = new Map<string, RunningCheck>();
  private readonly latest = new Map<string, CheckQueryResult>();
  private stopped = false;

  constructor(
    private readonly cfg: AllocCheckRunnerConfig,
    private readonly probe: Prober = probeCheck,
  ) {}

  /** The ID Nomad-style clients key a check's result by: stable for the alloc, service and check. */
  checkId(service: string, task: string | null, check: string): string {
    return createHash('sha256').update(`${this.cfg.allocId}\u0000${this.cfg.group}\u0000${task ?? ''}\u0000${service}\u0000${check}`).digest('hex').slice(0, 32);
  }

  /** Starts the checks of services newly registered, stops those of services gone. */
  sync(active: readonly ActiveService[]): void {
    if (this.stopped) return;
    const want = new Map<string, { a: ActiveService; c: ActiveService['checks'][number] }>();
    for (const a of active) {
      for (const c of a.checks) if (RUN_TYPES.has(c.check.Type)) want.set(this.checkId(a.reg.ServiceName, a.task, c.check.Name), { a, c });
    }
    for (const [id, r] of this.running) {
      const w = want.get(id);
      if (!w || fingerprintOf(w) !== r.fingerprint) {
        // The last result stays readable while the check is stopped (its task restarting).
        r.stop.abort();
        this.running.delete(id);
      }
    }
    for (const [id, w] of want) {
      if (this.running.has(id)) continue;
      const stop = new AbortController();
      this.running.set(id, { stop, fingerprint: fingerprintOf(w) });
      void this.loop(id, w.a, w.c, stop.signal);
    }
    this.cfg.onChange();
  }

  /** Every check's latest result, by check ID. */
  results(): Record<string, CheckQueryResult> {
    return Object.fromEntries(this.latest);
  }

  /** Whether the allocation has checks to run at all. */
  hasChecks(): boolean {
    return this.running.size > 0;
  }

  /** Whether every running check's latest result is a success (true with none). */
  allPassing(): boolean {
    for (const id of this.running.keys()) if (this.latest.get(id)?.Status !== CheckStatus.Success) return false;
    return true;
  }

  /** Stops every check (the allocation stops or the agent shuts down). */
  stop(): void {
    this.stopped = true;
    for (const r of this.running.values()) r.stop.abort();
    this.running.clear();
  }

  private async loop(id: string, a: ActiveService, c: ActiveService['checks'][number], signal: AbortSignal): Promise<void> {
    const { check } = c;
    const task = a.task ?? (check.TaskName || null);
    const base: Omit<CheckQueryResult, 'Status' | 'Output' | 'Timestamp'> = {
      ID: id,
      Mode: check.OnUpdate === 'ignore' ? 'readiness' : 'healthiness',
      Group: `${this.cfg.group}`,
      ...(a.task ? { Task: a.task } : {}),
      Service: a.reg.ServiceName,
      Check: check.Name,
    };
    const now = (): number => this.cfg.clock.now();
    this.record({ ...base, Status: CheckStatus.Pending, Output: 'nomad: waiting to run', Timestamp: Math.floor(now() / 1000) });
    const restart = check.CheckRestart && task ? new CheckRestartTracker(check.CheckRestart.Limit, nanosToMs(check.CheckRestart.Grace ?? 0), now()) : null;
    const intervalMs = Math.max(1, nanosToMs(check.Interval));
    const timeoutMs = Math.max(1, nanosToMs(check.Timeout));
    while (!signal.aborted) {
      const r = await this.probe(check, { address: c.address, port: c.port, timeoutMs });
      if (signal.aborted) break;
      this.record({ ...base, Status: r.status, Output: r.output, ...(r.statusCode ? { StatusCode: r.statusCode } : {}), Timestamp: Math.floor(now() / 1000) });
      if (restart && task && restart.observe(r.status, now())) {
        this.cfg.logger.info({ alloc: this.cfg.allocId, task, check: check.Name }, 'check_restart: restarting unhealthy task');
        this.cfg.onRestart(task, `healthcheck: check ${JSON.stringify(check.Name)} unhealthy`);
      }
      await this.cfg.clock.sleep(intervalMs, signal).catch(() => undefined);
    }
  }

  private record(r: CheckQueryResult): void {
    const prev = this.latest.get(r.ID);
    this.latest.set(r.ID, r);
    if (prev?.Status !== r.Status) this.cfg.onChange();
  }
}

function fingerprintOf(w: { a: ActiveService; c: ActiveService['checks'][number] }): string {
  return JSON.stringify([w.c.address, w.c.port, w.c.check, w.a.task]);
}
