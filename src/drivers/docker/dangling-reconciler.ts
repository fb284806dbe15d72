/**
 * Removes dangling containers, as Nomad's `gc.dangling_containers` does: containers this client
 * created (labelled with its client id) that no task tracks any more and that are older than
 * the creation grace — left behind when the agent died between creating a container and
 * recording it, or when an allocation was collected while the agent was down. Containers of
 * other clients on the same engine are never touched.
 */
import type { Clock, Timer } from '../../time/clock.js';
import type { EngineClient } from './engine-client.js';
import type { DockerPluginConfig } from './plugin-config.js';

/** The label naming the Caravan client that created a container. */
export const LABEL_CLIENT = 'io.caravan.client_id';

interface ContainerSummary {
  Id: string;
  Names: string[];
  Created: number;
}

/** Periodically removes this client's untracked containers. */
export class DanglingReconciler {
  private timer: Timer | null = null;
  private stopped = false;

  constructor(
    private readonly engine: EngineClient,
    private readonly clientId: string,
    private readonly config: DockerPluginConfig['gc']['dangling'],
    private readonly clock: Clock,
    /** Container IDs some task tracks (or is starting) right now. */
    private readonly tracked: () => Set<string>,
    private readonly logger?: { warn(msg: string): void; debug?(msg: string): void },
  ) {}

  /** Schedules the next pass (idempotent while one is scheduled). */
  start(): void {
    if (this.stopped || this.timer) return;
    this.timer = this.clock.setTimer(this.config.periodMs, () => {
      void this.reconcile()
        .catch((err: unknown) => this.logger?.warn(`docker: dangling container check failed: ${(err as Error).message}`))
        .finally(() => {
          this.timer = null;
          this.start();
        });
    });
  }

  stop(): void {
    this.stopped = true;
    this.timer?.cancel();
  }

  /** One pass; resolves the IDs removed (or, in dry-run mode, that would be). */
  async reconcile(): Promise<string[]> {
    const filters = JSON.stringify({ label: [`${LABEL_CLIENT}=${this.clientId}`] });
    const list = await this.engine.json<ContainerSummary[]>({ method: 'GET', path: '/containers/json', query: { all: 1, filters } });
    const tracked = this.tracked();
    const cutoff = this.clock.now() - this.config.creationGraceMs;
    const out: string[] = [];
    for (const c of list) {
      if (tracked.has(c.Id) || c.Created * 1000 > cutoff) continue;
      out.push(c.Id);
      if (this.config.dryRun) {
        this.logger?.warn(`docker: dangling container ${c.Names.join(',')} (${c.Id}) would be removed (dry_run)`);
        continue;
      }
      await this.engine.json({ method: 'DELETE', path: `/containers/${c.Id}`, query: { force: 1, v: 1 } }).catch((err: unknown) => {
        this.logger?.warn(`docker: removing dangling container ${c.Id}: ${(err as Error).message}`);
      });
    }
    return out;
  }
}
