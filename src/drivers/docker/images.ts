/**
 * Images for docker tasks: use a present image, pull a missing one (or every time with
 * force_pull) while reporting progress as task events, and remove images no task uses any more
 * after `gc.image_delay`, as Nomad's image coordinator does.
 */
import type { Clock, Timer } from '../../time/clock.js';
import { DriverError, DriverErrorCode } from '../driver.js';
import { EngineError, isNotFound, type EngineClient } from './engine-client.js';
import type { DockerPluginConfig } from './plugin-config.js';
import { splitImage, type RegistryAuth } from './task-config.js';

/** Pull errors that retrying cannot fix (Nomad's imageNotFoundMatcher). */
const NOT_FOUND = /(not found|manifest unknown|pull access denied|repository does not exist|invalid reference format)/i;

interface PullMessage {
  status?: string;
  progress?: string;
  id?: string;
  error?: string;
  errorDetail?: { message?: string };
}

/** Where an image for a task comes from, and who uses it. */
export class ImageCoordinator {
  /** Image ID → task ids using it. */
  private readonly users = new Map<string, Set<string>>();
  private readonly removals = new Map<string, Timer>();

  constructor(
    private readonly engine: EngineClient,
    private readonly plugin: DockerPluginConfig,
    private readonly clock: Clock,
    private readonly logger?: { warn(msg: string): void },
  ) {}

  /** The ID of `image`, pulled first when missing or when `forcePull`. Throws DriverError. */
  async ensure(image: string, opts: { forcePull: boolean; auth: RegistryAuth | null; emit: (msg: string) => void }): Promise<string> {
    if (!opts.forcePull) {
      const id = await this.inspect(image);
      if (id) return id;
    }
    opts.emit(`Downloading image`);
    try {
      await this.pull(image, opts.auth, opts.emit);
    } catch (err) {
      const msg = err instanceof Error ? err.message : String(err);
      throw new DriverError(DriverErrorCode.StartFailed, `Failed to pull \`${image}\`: ${msg}`, !NOT_FOUND.test(msg), { cause: err });
    }
    const id = await this.inspect(image);
    if (!id) throw new DriverError(DriverErrorCode.StartFailed, `Failed to pull \`${image}\`: the engine reports no such image after the pull`, false);
    return id;
  }

  private async inspect(image: string): Promise<string | null> {
    try {
      const info = await this.engine.json<{ Id: string }>({ method: 'GET', path: `/images/${encodeURIComponent(image)}/json` });
      return info.Id;
    } catch (err) {
      if (isNotFound(err)) return null;
      throw new DriverError(DriverErrorCode.StartFailed, `docker: inspecting image ${image}: ${(err as Error).message}`, true, { cause: err });
    }
  }

  /** Pulls, failing when the engine reports an error or goes quiet for pull_activity_timeout. */
  private async pull(image: string, auth: RegistryAuth | null, emit: (msg: string) => void): Promise<void> {
    const { repo, tag } = splitImage(image);
    const ctl = new AbortController();
    const res = await this.engine.stream({
      method: 'POST',
      path: '/images/create',
      query: { fromImage: repo, ...(tag ? { tag } : {}) },
      headers: { 'X-Registry-Auth': Buffer.from(JSON.stringify(auth ?? {})).toString('base64url') },
      signal: ctl.signal,
    });
    await new Promise<void>((resolve, reject) => {
      let buf = '';
      let failure: string | null = null;
      let lastReport = 0;
      let timer = this.clock.setTimer(this.plugin.pullActivityTimeoutMs, onIdle);
      function onIdle(): void {
        failure = `no pull progress for ${Math.round(timeoutMs / 1000)} s (pull_activity_timeout)`;
        ctl.abort();
        res.destroy();
      }
      const timeoutMs = this.plugin.pullActivityTimeoutMs;
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        timer.cancel();
        timer = this.clock.setTimer(timeoutMs, onIdle);
        buf += chunk;
        let nl: number;
        while ((nl = buf.indexOf('\n')) >= 0) {
          const line = buf.slice(0, nl).trim();
          buf = buf.slice(nl + 1);
          if (!line) continue;
          let m: PullMessage;
          try {
            m = JSON.parse(line) as PullMessage;
          } catch {
            continue;
          }
          if (m.error || m.errorDetail?.message) failure = m.errorDetail?.message ?? m.error ?? 'pull failed';
          else if (m.progress && this.clock.now() - lastReport >= 2_000) {
            lastReport = this.clock.now();
            emit(`Image ${image}: ${m.status ?? ''} ${m.progress}`.replace(/\s+/g, ' ').trim());
          }
        }
      });
      const finish = (err?: Error) => {
        timer.cancel();
        if (failure) reject(new Error(failure));
        else if (err) reject(err);
        else resolve();
      };
      res.on('end', () => finish());
      res.on('error', (err) => finish(err));
      res.on('close', () => finish());
    });
  }

  /** `taskId` uses image `id`: cancel a pending removal. */
  acquire(id: string, taskId: string): void {
    this.removals.get(id)?.cancel();
    this.removals.delete(id);
    let set = this.users.get(id);
    if (!set) this.users.set(id, (set = new Set()));
    set.add(taskId);
  }

  /** `taskId` no longer uses image `id`: once nobody does, remove it after the delay (gc.image). */
  release(id: string, taskId: string): void {
    const set = this.users.get(id);
    if (!set) return;
    set.delete(taskId);
    if (set.size > 0) return;
    this.users.delete(id);
    if (!this.plugin.gc.image) return;
    const timer = this.clock.setTimer(this.plugin.gc.imageDelayMs, () => {
      this.removals.delete(id);
      if (this.users.has(id)) return;
      void this.engine.json({ method: 'DELETE', path: `/images/${encodeURIComponent(id)}` }).catch((err: unknown) => {
        // 409: another container (not ours) still uses it, which is fine.
        if (!(err instanceof EngineError && (err.status === 409 || err.status === 404))) this.logger?.warn(`docker: removing image ${id}: ${(err as Error).message}`);
      });
    });
    this.removals.set(id, timer);
  }

  /** Cancels pending removals (agent shutdown). */
  close(): void {
    for (const t of this.removals.values()) t.cancel();
    this.removals.clear();
  }
}
