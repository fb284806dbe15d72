/**
 * The docker driver's side of group networks (Nomad's CreateNetwork and DestroyNetwork): one
 * pause container per allocation, named `nomad_init_<alloc id>` and labelled with the
 * allocation and client, from `infra_image`, in network mode "none" — a namespace with only its
 * loopback. The client names that namespace after the allocation and sets it up with CNI; the
 * allocation's docker tasks join it by the container's ID (sandbox-join.ts).
 *
 * The pause container outlives the agent like any task container: a restarted agent finds it
 * again by ID (sandboxRunning), and the client removes it after the last task stopped, or, for
 * an allocation it no longer holds, when it starts (its network record names the container).
 */
import type { Clock } from '../../time/clock.js';
import { DriverError, DriverErrorCode, type DriverNetworkManager, type DriverSandbox } from '../driver.js';
import { EngineError, isNotFound, type EngineClient } from './engine-client.js';
import type { ImageCoordinator } from './images.js';
import type { DockerPluginConfig } from './plugin-config.js';
import { LABEL_ALLOC_ID } from './task-config.js';

/** Nomad's name prefix of pause containers. */
export const PAUSE_NAME_PREFIX = 'nomad_init_';

/** The pause container's name for an allocation. */
export function pauseContainerName(allocId: string): string {
  return `${PAUSE_NAME_PREFIX}${allocId}`;
}

interface PauseInfo {
  Id: string;
  Config: { Labels: Record<string, string> | null };
  State: { Running: boolean; Pid: number };
}

function errText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** Creates, finds and removes the pause containers of this client's allocations. */
export class PauseContainers implements DriverNetworkManager {
  /** IDs of the pause containers of allocations this agent runs (kept from dangling collection). */
  private readonly live = new Set<string>();

  constructor(
    private readonly engine: EngineClient,
    private readonly images: ImageCoordinator,
    private readonly config: DockerPluginConfig,
    private readonly clock: Clock,
    /** Labels every container of this client carries (its client id). */
    private readonly clientLabels: Record<string, string>,
  ) {}

  /** The pause containers in use. */
  ids(): ReadonlySet<string> {
    return this.live;
  }

  async createNetwork(allocId: string, req: { hostname?: string }): Promise<DriverSandbox> {
    const name = pauseContainerName(allocId);
    const found = await this.find(name, allocId);
    if (found?.State.Running && found.State.Pid > 0) {
      this.live.add(found.Id);
      return { id: found.Id, pid: found.State.Pid };
    }
    // A stopped one of an earlier attempt: its namespace is gone with its process.
    if (found) await this.remove(found.Id);
    await this.pullInfraImage();
    let id: string;
    try {
      id = (
        await this.engine.json<{ Id: string }>({
          method: 'POST',
          path: '/containers/create',
          query: { name },
          body: {
            Image: this.config.infraImage,
            ...(req.hostname ? { Hostname: req.hostname } : {}),
            Labels: { [LABEL_ALLOC_ID]: allocId, ...this.clientLabels },
            HostConfig: { NetworkMode: 'none', LogConfig: { Type: 'json-file', Config: {} } },
          },
        })
      ).Id;
    } catch (err) {
      throw new DriverError(DriverErrorCode.StartFailed, `docker: creating the pause container ${name}: ${errText(err)}`, !(err instanceof EngineError && err.status === 400), { cause: err });
    }
    this.live.add(id);
    try {
      await this.engine.json({ method: 'POST', path: `/containers/${id}/start` });
      const info = await this.inspect(id);
      if (!info.State.Running || info.State.Pid <= 0) {
        throw new Error(`it exited at once (infra_image ${JSON.stringify(this.config.infraImage)} must run a long-lived command, as the pause image does)`);
      }
      return { id, pid: info.State.Pid };
    } catch (err) {
      await this.remove(id).catch(() => undefined);
      throw new DriverError(DriverErrorCode.StartFailed, `docker: starting the pause container ${name}: ${errText(err)}`, true, { cause: err });
    }
  }

  async sandboxRunning(allocId: string, sandboxId: string): Promise<boolean> {
    const info = await this.find(sandboxId, allocId);
    if (!info?.State.Running) return false;
    this.live.add(info.Id);
    return true;
  }

  async destroyNetwork(allocId: string, sandboxId?: string): Promise<void> {
    const info = await this.find(sandboxId ?? pauseContainerName(allocId), allocId);
    if (!info) return;
    await this.remove(info.Id);
  }

  /** The container by ID or name when it is this allocation's pause container; null when there is none. */
  private async find(ref: string, allocId: string): Promise<PauseInfo | null> {
    let info: PauseInfo;
    try {
      info = await this.inspect(ref);
    } catch (err) {
      if (isNotFound(err)) return null;
      throw new DriverError(DriverErrorCode.StartFailed, `docker: inspecting the pause container ${ref}: ${errText(err)}`, true, { cause: err });
    }
    // Never another allocation's or another program's container of the same name.
    return info.Config.Labels?.[LABEL_ALLOC_ID] === allocId ? info : null;
  }

  private inspect(ref: string): Promise<PauseInfo> {
    return this.engine.json<PauseInfo>({ method: 'GET', path: `/containers/${encodeURIComponent(ref)}/json` });
  }

  private async remove(id: string): Promise<void> {
    try {
      await this.engine.json({ method: 'DELETE', path: `/containers/${encodeURIComponent(id)}`, query: { force: 1, v: 1 } });
    } catch (err) {
      if (!isNotFound(err)) throw new DriverError(DriverErrorCode.StartFailed, `docker: removing the pause container ${id}: ${errText(err)}`, true, { cause: err });
    }
    this.live.delete(id);
  }

  /** Pulls infra_image (see below when), within infra_image_pull_timeout. */
  private async pullInfraImage(): Promise<void> {
    const image = this.config.infraImage;
    let timer: { cancel(): void } | null = null;
    const timeout = new Promise<never>((_, reject) => {
      timer = this.clock.setTimer(this.config.infraImagePullTimeoutMs, () => {
        reject(new DriverError(DriverErrorCode.StartFailed, `docker: pulling infra_image ${JSON.stringify(image)} took longer than infra_image_pull_timeout`, true));
      });
    });
    try {
      // As Nomad: an image tagged "latest" (or untagged) is pulled again, any other only when missing.
      const latest = !image.includes('@') && !/:[^/:]+$/.test(image) ? true : image.endsWith(':latest');
      await Promise.race([this.images.ensure(image, { forcePull: latest, auth: null, emit: () => undefined }), timeout]);
    } finally {
      (timer as { cancel(): void } | null)?.cancel();
    }
  }
}
