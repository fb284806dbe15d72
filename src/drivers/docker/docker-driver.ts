/**
 * The docker driver: Nomad's `driver = "docker"` on the Docker Engine API. A task is one
 * container named `<task>-<allocId>` and labelled with its alloc and task, so a restarted agent
 * finds it again (recoverTask) instead of starting a second one.
 *
 *   startTask: parse config ─► image (pull if missing) ─► create ─► start ─► follow logs, wait
 *   stopTask:  kill with kill_signal ─► after kill_timeout, SIGKILL
 *   destroyTask: remove the container (gc.container) and release its image (gc.image)
 *
 * Tasks of a group network (bridge, none, cni/*) join the allocation's pause container
 * (pause-container.ts), which the client asks for through `network` before the first task starts.
 *
 * Containers outlive the agent; their output stays in the engine (json-file) until copied to
 * the task's log files, so nothing is lost while the agent is down.
 */
import { systemClock, type Clock } from '../../time/clock.js';
import {
  DriverError,
  DriverErrorCode,
  FsIsolation,
  TaskRunState,
  type Driver,
  type DriverCapabilities,
  type DriverFingerprint,
  type ExecSpec,
  type ExitResult,
  type StartTaskEvents,
  type TaskConfig,
  type TaskHandle,
  type TaskResourceUsage,
  type TaskStatus,
} from '../driver.js';
import { signalNumber } from '../supervisor/signals.js';
import type { Obj } from './config-values.js';
import { ContainerLogCopy, resumePoint } from './container-logs.js';
import { startContainerExec } from './container-exec.js';
import { ResidentExec } from './resident-exec.js';
import { EngineClient, EngineError, isNotFound, parseEndpoint } from './engine-client.js';
import { DanglingReconciler, LABEL_CLIENT } from './dangling-reconciler.js';
import { ImageCoordinator } from './images.js';
import { PauseContainers } from './pause-container.js';
import { parseDockerPluginConfig, type DockerPluginConfig } from './plugin-config.js';
import { containerName, LABEL_ALLOC_ID, LABEL_TASK_NAME, parseDockerTask } from './task-config.js';

/** The driver's name, as in jobspecs. */
export const DOCKER_DRIVER_NAME = 'docker';

/** Options of the docker driver. */
export interface DockerDriverOptions {
  /** The body of the client's `plugin "docker" { config { … } }` block. */
  pluginConfig?: Obj;
  clock?: Clock;
  logger?: { warn(msg: string): void; debug?(msg: string): void };
  /**
   * Names this client on its containers (label io.caravan.client_id), so dangling containers
   * it left can be told from other clients' on a shared engine; without it none are collected.
   */
  clientId?: string;
}

/** What the driver keeps in TaskHandle.state to reattach. */
interface DockerHandleState {
  containerId: string;
  imageId: string;
}

/** The engine's container inspect answer, the parts used here. */
interface ContainerInfo {
  Id: string;
  Config: { Labels: Record<string, string> | null };
  State: { Running: boolean; Pid: number; ExitCode: number; OOMKilled: boolean; StartedAt: string; FinishedAt: string; Error: string };
  HostConfig?: { Runtime?: string };
}

interface DockerTask {
  handle: TaskHandle;
  containerId: string;
  imageId: string;
  status: TaskStatus;
  exited: Promise<ExitResult>;
  settle: (r: ExitResult) => void;
  logs: ContainerLogCopy | null;
  waitCtl: AbortController;
  lastCpu: { ns: number; at: number } | null;
  /** The resident exec shell of a runc container (the exec fast path); null: Engine exec only. */
  resident: ResidentExec | null;
}

/** How often, and how far apart, an exit by SIGKILL is re-inspected for the engine's OOM flag. */
const OOM_RECHECKS = 3;
const OOM_RECHECK_MS = 100;
/** How long an exit waits for the last log lines to be copied. */
const LOG_DRAIN_MS = 2_000;
const NS_PER_TICK = 10_000_000;

function parseTaskId(taskId: string): { allocId: string; taskName: string } {
  const i = taskId.indexOf('/');
  return i < 0 ? { allocId: taskId, taskName: '' } : { allocId: taskId.slice(0, i), taskName: taskId.slice(i + 1) };
}

function errText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** The docker driver. One instance per agent; see the file comment for the design. */
export class DockerDriver implements Driver {
  readonly name = DOCKER_DRIVER_NAME;
  readonly config: DockerPluginConfig;
  private readonly engine: EngineClient;
  private readonly clock: Clock;
  private readonly images: ImageCoordinator;
  private readonly tasks = new Map<string, DockerTask>();
  /** Containers created by a start still in progress (not tracked yet). */
  private readonly starting = new Set<string>();
  private readonly dangling: DanglingReconciler | null = null;
  /** Group networks' pause containers (Nomad's CreateNetwork/DestroyNetwork). */
  readonly network: PauseContainers;
  private shutDown = false;

  constructor(private readonly opts: DockerDriverOptions = {}) {
    this.config = parseDockerPluginConfig(opts.pluginConfig);
    let endpoint;
    try {
      endpoint = parseEndpoint(this.config.endpoint);
    } catch (err) {
      throw new DriverError(DriverErrorCode.BadConfig, `docker: config option "endpoint" ${errText(err)}`, false);
    }
    this.engine = new EngineClient(endpoint);
    this.clock = opts.clock ?? systemClock;
    this.images = new ImageCoordinator(this.engine, this.config, this.clock, opts.logger);
    this.network = new PauseContainers(this.engine, this.images, this.config, this.clock, opts.clientId ? { [LABEL_CLIENT]: opts.clientId } : {});
    if (opts.clientId && this.config.gc.container && this.config.gc.dangling.enabled) {
      // Started with the first task (started or recovered): a client that never runs a docker
      // task holds no timer for it.
      this.dangling = new DanglingReconciler(this.engine, opts.clientId, this.config.gc.dangling, this.clock, () => this.trackedContainers(), opts.logger);
    }
  }

  /** Container IDs tracked by a task, being started, or owning a group network. */
  private trackedContainers(): Set<string> {
    const out = new Set([...this.starting, ...this.network.ids()]);
    for (const t of this.tasks.values()) out.add(t.containerId);
    return out;
  }

  /** A container sees its image's root filesystem, and an exec runs inside the container. */
  capabilities(): DriverCapabilities {
    return { fsIsolation: FsIsolation.Image };
  }

  async fingerprint(): Promise<DriverFingerprint> {
    try {
      const [version, info] = await Promise.all([
        this.engine.json<{ Version: string; ApiVersion: string }>({ method: 'GET', path: '/version', timeoutMs: 3_000 }),
        this.engine.json<{ Runtimes?: Record<string, unknown>; OSType?: string; DefaultRuntime?: string }>({ method: 'GET', path: '/info', timeoutMs: 3_000 }),
      ]);
      return {
        detected: true,
        healthy: true,
        healthDescription: 'Healthy',
        attributes: {
          'driver.docker': '1',
          'driver.docker.version': version.Version,
          'driver.docker.runtimes': Object.keys(info.Runtimes ?? {}).sort().join(','),
          'driver.docker.os_type': info.OSType ?? 'linux',
          ...(this.config.allowPrivileged ? { 'driver.docker.privileged.enabled': '1' } : {}),
          ...(this.config.volumesEnabled ? { 'driver.docker.volumes.enabled': '1' } : {}),
        },
      };
    } catch (err) {
      return { detected: false, healthy: false, healthDescription: `Failed to connect to docker daemon at ${this.config.endpoint}: ${errText(err)}`, attributes: {} };
    }
  }

  async startTask(config: TaskConfig, events?: StartTaskEvents): Promise<TaskHandle> {
    const existing = this.tasks.get(config.id);
    if (existing && existing.status.state === TaskRunState.Running) {
      throw new DriverError(DriverErrorCode.StartFailed, `docker: task "${config.id}" is already running`, false);
    }
    if (config.networkIsolation && !config.networkIsolation.sandboxId) {
      // A namespace the client made on its own (an allocation set up before a docker task was
      // known to it): a container can only join another container's, never a path.
      throw new DriverError(DriverErrorCode.BadConfig, `docker: the group network (mode ${JSON.stringify(config.networkMode ?? '')}) has no pause container to join`, false);
    }
    const task = parseDockerTask(config, this.config, this.opts.clientId ? { [LABEL_CLIENT]: this.opts.clientId } : {});
    const imageId = await this.images.ensure(task.image, { forcePull: task.forcePull, auth: task.auth, emit: (m) => events?.emit(m) });
    const name = containerName(config.allocId, config.taskName);
    const containerId = await this.createContainer(name, task.create, config);
    this.starting.add(containerId);
    let info: ContainerInfo;
    try {
      await this.engine.json({ method: 'POST', path: `/containers/${containerId}/start` });
      info = await this.inspect(containerId);
    } catch (err) {
      this.starting.delete(containerId);
      await this.removeContainer(containerId);
      throw new DriverError(DriverErrorCode.StartFailed, `docker: starting container for "${config.id}": ${errText(err)}`, !(err instanceof EngineError && err.status === 400), { cause: err });
    }
    const handle: TaskHandle = {
      taskId: config.id,
      driver: this.name,
      config,
      startedAt: Date.parse(info.State.StartedAt) || this.clock.now(),
      // The container's init on the host; one that already exited has none any more, and is
      // then named by its pid inside its own namespace, 1.
      pid: info.State.Pid > 0 ? info.State.Pid : 1,
      state: { containerId, imageId } satisfies DockerHandleState as unknown as Record<string, unknown>,
    };
    this.images.acquire(imageId, config.id);
    this.track(handle, info, '0');
    this.starting.delete(containerId);
    return handle;
  }

  /** Creates the container; one left by an earlier attempt of the same task is removed first (never two). */
  private async createContainer(name: string, body: Obj, config: TaskConfig): Promise<string> {
    for (let attempt = 0; ; attempt++) {
      try {
        const res = await this.engine.json<{ Id: string }>({ method: 'POST', path: '/containers/create', query: { name }, body });
        return res.Id;
      } catch (err) {
        if (err instanceof EngineError && err.status === 409 && attempt === 0) {
          await this.removeContainer(name);
          continue;
        }
        const recoverable = !(err instanceof EngineError && err.status === 400);
        throw new DriverError(DriverErrorCode.StartFailed, `docker: creating container for "${config.id}": ${errText(err)}`, recoverable, { cause: err });
      }
    }
  }

  async recoverTask(handle: TaskHandle): Promise<void> {
    if (this.tasks.has(handle.taskId)) return;
    const st = handle.state as Partial<DockerHandleState>;
    const { allocId, taskName } = parseTaskId(handle.taskId);
    let info: ContainerInfo | null = null;
    for (const ref of [st.containerId, containerName(allocId, taskName)]) {
      if (!ref) continue;
      try {
        info = await this.inspect(ref);
        break;
      } catch (err) {
        if (!isNotFound(err)) throw new DriverError(DriverErrorCode.RecoverFailed, `docker: recovering "${handle.taskId}": ${errText(err)}`, true, { cause: err });
      }
    }
    const labels = info?.Config.Labels ?? {};
    if (!info || labels[LABEL_ALLOC_ID] !== allocId || labels[LABEL_TASK_NAME] !== taskName) {
      throw new DriverError(DriverErrorCode.TaskNotFound, `docker: the container of task "${handle.taskId}" is gone`, true);
    }
    handle.state = { ...handle.state, containerId: info.Id };
    handle.pid = info.State.Pid || handle.pid;
    if (st.imageId) this.images.acquire(st.imageId, handle.taskId);
    this.track(handle, info, resumePoint(handle.config.logs, handle.config.taskName));
  }

  waitTask(taskId: string): Promise<ExitResult> {
    return this.mustGet(taskId).exited;
  }

  async stopTask(taskId: string, timeoutMs: number, signal: string): Promise<void> {
    const t = this.mustGet(taskId);
    if (t.status.state !== TaskRunState.Running) return;
    const sig = signal || 'SIGTERM';
    await this.kill(t, sig);
    if (sig !== 'SIGKILL' && sig !== 'KILL') {
      let timedOut = false;
      const timer = this.clock.setTimer(timeoutMs, () => {
        timedOut = true;
        void this.kill(t, 'SIGKILL').catch((err: unknown) => this.opts.logger?.warn(`docker: SIGKILL to "${taskId}": ${errText(err)}`));
      });
      await t.exited;
      if (!timedOut) timer.cancel();
      return;
    }
    await t.exited;
  }

  private async kill(t: DockerTask, signal: string): Promise<void> {
    try {
      await this.engine.json({ method: 'POST', path: `/containers/${t.containerId}/kill`, query: { signal } });
    } catch (err) {
      // 409: not running any more; 404: gone. Either way the wait settles the task.
      if (err instanceof EngineError && (err.status === 409 || err.status === 404)) return;
      throw new DriverError(DriverErrorCode.StartFailed, `docker: signal ${signal} to "${t.handle.taskId}": ${errText(err)}`, true, { cause: err });
    }
  }

  async destroyTask(taskId: string, force: boolean): Promise<void> {
    const t = this.tasks.get(taskId);
    if (!t) {
      // A handle the driver never reattached (its task ended while the agent was down): the
      // container may still be there; it must not be left behind.
      const { allocId, taskName } = parseTaskId(taskId);
      if (this.config.gc.container && taskName) await this.removeContainer(containerName(allocId, taskName), allocId);
      return;
    }
    if (t.status.state === TaskRunState.Running) {
      if (!force) throw new DriverError(DriverErrorCode.StartFailed, `docker: cannot destroy running task "${taskId}"`, false);
      await this.stopTask(taskId, 0, 'SIGKILL');
    }
    t.logs?.stop();
    t.waitCtl.abort();
    t.resident?.close();
    this.tasks.delete(taskId);
    if (this.config.gc.container) await this.removeContainer(t.containerId);
    this.images.release(t.imageId, taskId);
  }

  /** Removes a container by id or name (forced, with its anonymous volumes); a missing one is fine. */
  private async removeContainer(ref: string, allocId?: string): Promise<void> {
    try {
      if (allocId !== undefined) {
        const info = await this.inspect(ref);
        if (info.Config.Labels?.[LABEL_ALLOC_ID] !== allocId) return;
      }
      await this.engine.json({ method: 'DELETE', path: `/containers/${encodeURIComponent(ref)}`, query: { force: 1, v: 1 } });
    } catch (err) {
      if (!isNotFound(err)) this.opts.logger?.warn(`docker: removing container ${ref}: ${errText(err)}`);
    }
  }

  inspectTask(taskId: string): TaskStatus {
    return { ...this.mustGet(taskId).status };
  }

  async signalTask(taskId: string, signal: string): Promise<void> {
    const t = this.mustGet(taskId);
    try {
      signalNumber(signal);
    } catch (err) {
      throw new DriverError(DriverErrorCode.BadConfig, `docker: ${errText(err)}`, false);
    }
    await this.kill(t, signal);
  }

  execSpec(taskId: string, command: string[]): ExecSpec {
    const t = this.mustGet(taskId);
    if (t.status.state !== TaskRunState.Running) throw new DriverError(DriverErrorCode.TaskNotFound, `docker: task "${taskId}" is not running`, false);
    const [file, ...args] = command.length > 0 ? command : ['/bin/sh'];
    return {
      file: file!,
      args,
      cwd: '/',
      env: {},
      start: (tty, events) => {
        const viaEngine = () => startContainerExec(this.engine, t.containerId, command, tty, events);
        return t.resident?.tryStart(command.length > 0 ? command : ['/bin/sh'], tty, events, viaEngine) ?? viaEngine();
      },
    };
  }

  /** Whether execs into the task's container run through its resident shell now (tests, benchmark). */
  residentExecReady(taskId: string): boolean {
    return this.tasks.get(taskId)?.resident?.ready ?? false;
  }

  async taskStats(taskId: string): Promise<TaskResourceUsage> {
    const t = this.mustGet(taskId);
    const now = this.clock.now();
    let rss = 0;
    let cpuNs = 0;
    if (t.status.state === TaskRunState.Running) {
      try {
        const s = await this.engine.json<{
          memory_stats?: { usage?: number; stats?: Record<string, number> };
          cpu_stats?: { cpu_usage?: { total_usage?: number } };
        }>({ method: 'GET', path: `/containers/${t.containerId}/stats`, query: { stream: 'false', 'one-shot': 'true' }, timeoutMs: 5_000 });
        const ms = s.memory_stats ?? {};
        rss = ms.stats?.['rss'] ?? ms.stats?.['anon'] ?? ms.usage ?? 0;
        cpuNs = s.cpu_stats?.cpu_usage?.total_usage ?? 0;
      } catch (err) {
        this.opts.logger?.debug?.(`docker: stats of "${taskId}": ${errText(err)}`);
      }
    }
    let cpuPercent = 0;
    if (t.lastCpu && now > t.lastCpu.at && cpuNs >= t.lastCpu.ns) cpuPercent = ((cpuNs - t.lastCpu.ns) / 1e6 / (now - t.lastCpu.at)) * 100;
    t.lastCpu = { ns: cpuNs, at: now };
    return { timestamp: now * 1_000_000, memoryRssBytes: rss, cpuTotalTicks: Math.round(cpuNs / NS_PER_TICK), cpuPercent, pids: t.handle.pid > 0 ? [t.handle.pid] : [] };
  }

  async shutdown(): Promise<void> {
    this.shutDown = true;
    this.dangling?.stop();
    for (const t of this.tasks.values()) {
      t.logs?.stop();
      t.waitCtl.abort();
      t.resident?.close();
    }
    this.images.close();
    this.engine.close();
  }

  private inspect(ref: string): Promise<ContainerInfo> {
    return this.engine.json<ContainerInfo>({ method: 'GET', path: `/containers/${encodeURIComponent(ref)}/json` });
  }

  private mustGet(taskId: string): DockerTask {
    const t = this.tasks.get(taskId);
    if (!t) throw new DriverError(DriverErrorCode.TaskNotFound, `docker: task "${taskId}" not found`, false);
    return t;
  }

  /** Tracks a container: copies its logs from `since` and settles its exit when it stops. */
  private track(handle: TaskHandle, info: ContainerInfo, since: string): void {
    let settle!: (r: ExitResult) => void;
    const exited = new Promise<ExitResult>((resolve) => (settle = resolve));
    const t: DockerTask = {
      handle,
      containerId: info.Id,
      imageId: String((handle.state as Partial<DockerHandleState>).imageId ?? ''),
      exited,
      logs: null,
      waitCtl: new AbortController(),
      lastCpu: null,
      resident: info.State.Running && ResidentExec.eligible(info.HostConfig?.Runtime) ? new ResidentExec(this.engine, info.Id, this.opts.logger) : null,
      status: { id: handle.taskId, state: TaskRunState.Running, startedAt: handle.startedAt, completedAt: null, exitResult: null, pid: handle.pid },
      settle: (r) => {
        if (t.status.state === TaskRunState.Exited) return;
        t.resident?.close();
        t.status = { ...t.status, state: TaskRunState.Exited, completedAt: this.clock.now(), exitResult: r };
        settle(r);
      },
    };
    this.tasks.set(handle.taskId, t);
    if (!this.shutDown) this.dangling?.start();
    try {
      t.logs = new ContainerLogCopy(this.engine, info.Id, handle.config.logs, handle.config.taskName, since);
    } catch (err) {
      // The log dir is unusable (e.g. the task planted a link where it should be): the task
      // still runs and is watched; only its output is not copied.
      this.opts.logger?.warn(`docker: copying the logs of "${handle.taskId}": ${errText(err)}`);
    }
    if (!this.shutDown) t.resident?.ensure();
    void this.watch(t, info.State.Running);
  }

  /** Waits for the container to stop, then settles the task with its exit code and OOM state. */
  private async watch(t: DockerTask, running: boolean): Promise<void> {
    while (running && !this.shutDown && !t.waitCtl.signal.aborted) {
      try {
        await this.engine.json({ method: 'POST', path: `/containers/${t.containerId}/wait`, signal: t.waitCtl.signal });
        break;
      } catch (err) {
        if (t.waitCtl.signal.aborted || this.shutDown) return;
        if (isNotFound(err)) break;
        // The engine went away for a moment: ask again.
        await this.clock.sleep(1_000, t.waitCtl.signal).catch(() => undefined);
      }
    }
    if (t.waitCtl.signal.aborted && t.status.state === TaskRunState.Running && this.shutDown) return;
    let result: ExitResult;
    try {
      let info = await this.inspect(t.containerId);
      // The engine learns of an OOM kill from its own event, which can come after the exit:
      // a SIGKILLed container is asked again briefly before it is called not OOM-killed.
      for (let i = 0; i < OOM_RECHECKS && info.State.ExitCode === 137 && !info.State.OOMKilled; i++) {
        await this.clock.sleep(OOM_RECHECK_MS);
        info = await this.inspect(t.containerId);
      }
      result = { exitCode: info.State.ExitCode, signal: 0, oomKilled: info.State.OOMKilled, ...(info.State.Error ? { err: info.State.Error } : {}) };
    } catch (err) {
      result = { exitCode: -1, signal: 0, oomKilled: false, err: `container vanished: ${errText(err)}` };
    }
    if (t.logs) {
      let drained = false;
      const timer = this.clock.setTimer(LOG_DRAIN_MS, () => {
        if (!drained) t.logs?.stop();
      });
      await t.logs.done;
      drained = true;
      timer.cancel();
    }
    t.settle(result);
  }
}

/** Creates the docker driver from the client's plugin config. */
export function createDockerDriver(opts: DockerDriverOptions = {}): Driver {
  return new DockerDriver(opts);
}
