/**
 * The client agent: fingerprints the node, registers it and heartbeats, watches the node's
 * allocations with a blocking query and runs each in an AllocRunner, restores every alloc
 * runner from the state DB after an agent restart, and batches allocation updates to the
 * servers. `shutdown()` stops the agent and leaves the tasks running.
 */
import { heartbeatWaitMs } from './heartbeat-wait.js';
import type { TaskApiConnections } from './taskrunner/hooks/task-api-hook.js';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { pino, type Logger } from 'pino';
import type { Allocation, Job, Node, NodeStatus } from '../structs/index.js';
import { MAX_ALLOC_IDS_PER_FETCH } from '../server/client-alloc-reads.js';
import { newNode } from '../structs/node.js';
import { isTerminalAlloc, isTerminalClientStatus } from '../structs/alloc.js';
import { systemClock, type Clock, type RandomSource } from '../time/clock.js';
import { FsIsolation, type Driver, type DriverCapabilities, type ExecSpec, type TaskResourceUsage } from '../drivers/driver.js';
import { builtinDrivers } from '../drivers/index.js';
import type { AllocClientUpdate } from '../structs/alloc.js';
import { taskActionCommand } from './task-action-command.js';
import { ClientApiError, ClientApiErrorCode } from '../http/client-api-error.js';
import type { ClientHttpApi } from '../http/client-http-api.js';
import type { ServerConnection } from './server-connection.js';
import { AllocRunner } from './allocrunner/alloc-runner.js';
import type { TaskRunner } from './taskrunner/task-runner.js';
import { AllocUpdateBatcher } from './alloc-update-batcher.js';
import { ServiceRegistrar } from './serviceregistration/service-registrar.js';
import type { CheckQueryResult } from './serviceregistration/alloc-check-runner.js';
import { StateDb, type ClientStateStore, type StoredAlloc } from './state/state-db.js';
import { loadNodeIdentity, type NodeIdentity } from './node/node-identity.js';
import { driversChanged, fingerprintDrivers, fingerprintHost, hostNetwork, withDriverAttributes, type HostFingerprint } from './node/fingerprint.js';
import type { NodeInfo } from './taskenv/task-env.js';
import { HostStatsCollector, type HostStats } from './node/host-stats.js';
import { applyMetaChanges, loadDynamicMeta, mergedMeta, saveDynamicMeta, type NodeMetaResponse } from './node/node-meta.js';
import { ClientError, ClientErrorCode, errorMessage } from './client-error.js';
import { taskUserPolicy, type TaskUserPolicy } from './taskrunner/task-user-policy.js';
import { envDenylist, hostEnvLookup, type HostEnvLookup } from './taskenv/host-env.js';
import { loadIntroToken } from './node/intro-token.js';
import { AllocNetworkConfigurator, clientNetworkConfig, type ClientNetworkConfig } from './network/alloc-network-configurator.js';
import { fingerprintCniPlugins } from './network/cni-fingerprint.js';
import { fingerprintHostVolumes, type HostVolumeSetting } from './node/host-volumes.js';
import { HostVolumeManager } from './hostvolumes/host-volume-manager.js';
import type { ClientHostVolumeConfig } from '../structs/host-volume.js';

export type { ServerConnection } from './server-connection.js';

/** How the agent configures its client. */
export interface ClientConfig {
  dataDir: string;
  connection: ServerConnection;
  nodeName?: string;
  datacenter?: string;
  region?: string;
  nodeClass?: string;
  /** The node pool it registers in (default "default"). */
  nodePool?: string;
  /**
   * The introduction token presented when the node registers (the servers check it for a node
   * they do not know yet); else `<dataDir>/intro_token.jwt` is read. Secret: never logged.
   */
  introToken?: string;
  meta?: Record<string, string>;
  /** Advertised HTTP address, "127.0.0.1:4646". */
  httpAddr: string;
  drivers?: Driver[];
  clock?: Clock;
  logger?: Logger;
  options?: Record<string, string>;
  /** Bodies of the agent's `plugin "<name>" { config { … } }` blocks (e.g. docker's). */
  plugins?: Record<string, Record<string, unknown>>;
  /** `client { chroot_env { … } }`: host path → path inside exec tasks; Nomad's default when undefined. */
  chrootEnv?: Record<string, string>;
  /** Group networking options (bridge_network_name, bridge_network_subnet, cni_path, …); Nomad's defaults when absent. */
  network?: Partial<ClientNetworkConfig>;
  /** `client { host_volume "<name>" { path read_only } }`: the host paths tasks may mount. */
  hostVolumes?: Record<string, HostVolumeSetting>;
  /** The agent's Task API: each task gets it on `secrets/api.sock` (without it, no socket). */
  taskApi?: TaskApiConnections;
  /** `host_volumes_dir`: where host volume plugins make dynamic volumes; default `<dataDir>/host_volumes`. */
  hostVolumesDir?: string;
  /** `host_volume_plugin_dir`: host volume plugins other than mkdir; default `<dataDir>/host_volume_plugins`. */
  hostVolumePluginDir?: string;
  /** Randomness for heartbeat jitter and restart delays (tests). */
  random?: RandomSource;
  /** State store override (tests); default SQLite under `<dataDir>/client/state.db`. */
  store?: ClientStateStore;
  /** The node's ID and secret (tests, the node simulator); default generated once and kept under `<dataDir>/client`. */
  identity?: NodeIdentity;
  /** The host's attributes (CNI plugins' included) and resources (the node simulator gives each node its own); default the real host's fingerprint. */
  host?: HostFingerprint;
  /** Whether allocation directories are built on disk (default true); the node simulator's mock tasks need none. */
  allocDirsOnDisk?: boolean;
}

/** How long one blocking query for allocations waits. */
const WATCH_WAIT_MS = 30_000;
/** How often drivers are fingerprinted again (a docker engine may come or go). */
const DRIVER_FINGERPRINT_MS = 10_000;
/** Pause after a failed register, heartbeat or watch, doubling up to the cap. */
const RETRY_BASE_MS = 500;
const RETRY_MAX_MS = 15_000;
/** How long a -dev agent stopping waits for its destroyed allocations' deregistrations. */
const SERVICES_SETTLE_MS = 2_000;

/** A running client agent. Create with `Client.start`. */
export class Client implements ClientHttpApi {
  private readonly runners = new Map<string, AllocRunner>();
  /** AllocModifyIndex of the version each runner was last given. */
  private readonly seen = new Map<string, number>();
  /** AllocModifyIndex of the terminal allocations listed for the node that we do not run. */
  private readonly ignored = new Map<string, number>();
  private readonly stopCtl = new AbortController();
  private readonly batcher: AllocUpdateBatcher;
  /** Writes the native service registrations of this node's allocations to the servers. */
  private readonly services: ServiceRegistrar;
  private readonly clock: Clock;
  private readonly random: RandomSource;
  private readonly logger: Logger;
  private readonly drivers: Map<string, Driver>;
  /** Who tasks may run as (the options user.denylist and user.checked_drivers). */
  private readonly userPolicy: TaskUserPolicy;
  /** The agent's environment as tasks may read it: through the client's env.denylist. */
  private readonly hostEnv: HostEnvLookup;
  private node!: Node;
  private nodeInfo!: NodeInfo;
  private registered = false;
  private heartbeatTtlMs = 10_000;
  private loops: Promise<void>[] = [];
  private hostStatsCollector!: HostStatsCollector;
  /** Dynamic host volumes placed on this node (hostvolumes/host-volume-manager.ts). */
  private hostVolumeManager!: HostVolumeManager;
  /** The volumes of the client's configuration; dynamic ones are added beside them. */
  private staticHostVolumes: Record<string, ClientHostVolumeConfig> = {};
  /** Group networks of this client's allocations (namespaces, CNI). */
  private readonly network: AllocNetworkConfigurator;

  private constructor(
    private readonly config: ClientConfig,
    private readonly store: ClientStateStore,
    drivers: Driver[],
    envDenied: ReadonlySet<string>,
  ) {
    this.clock = config.clock ?? systemClock;
    this.random = config.random ?? Math.random;
    this.logger = config.logger ?? pino({ level: 'silent' });
    this.drivers = new Map(drivers.map((d) => [d.name, d]));
    this.userPolicy = taskUserPolicy(config.options);
    this.hostEnv = hostEnvLookup(process.env, envDenied);
    this.network = new AllocNetworkConfigurator(clientNetworkConfig(config.network), join(config.dataDir, 'network'), (name) => this.drivers.get(name)?.network);
    this.batcher = new AllocUpdateBatcher(
      (u) => this.config.connection.updateAllocs(u),
      this.clock,
      undefined,
      (err) => this.logger.warn({ err: errorMessage(err) }, 'sending allocation updates failed; will retry'),
    );
    this.services = new ServiceRegistrar(this.config.connection, this.clock, this.logger);
  }

  /**
   * Starts a client: fingerprints, restores allocations from the state DB (reattaching to
   * their tasks), then registers with the servers and begins heartbeating and watching
   * allocations in the background. Resolves once restored; registration retries on its own.
   */
  static async start(config: ClientConfig): Promise<Client> {
    // Read before anything opens: an invalid list refuses to start the client (CLIENT_OPTION_INVALID).
    const envDenied = envDenylist(config.options);
    mkdirSync(config.dataDir, { recursive: true });
    const store = config.store ?? new StateDb(join(config.dataDir, 'client', 'state.db'));
    const drivers = config.drivers ?? [...builtinDrivers({ dataDir: config.dataDir, clock: config.clock, plugins: config.plugins, envDenylist: [...envDenied], ...(config.chrootEnv ? { chrootEnv: config.chrootEnv } : {}) }).values()];
    const c = new Client(config, store, drivers, envDenied);
    await c.fingerprint();
    await c.restore();
    c.loops.push(c.heartbeatLoop(), c.watchLoop(), c.driverFingerprintLoop(), c.hostVolumeManager.run(() => c.node.ID, c.stopCtl.signal));
    return c;
  }

  /** The node's ID (stable across restarts). */
  nodeId(): string {
    return this.node.ID;
  }

  /** The node as registered with the servers. */
  nodeDescription(): Node {
    return this.node;
  }

  /** The runner of an allocation on this node, if any. */
  allocRunner(allocId: string): AllocRunner | undefined {
    return this.runners.get(allocId);
  }

  /** All alloc runners. */
  allocRunners(): AllocRunner[] {
    return [...this.runners.values()];
  }

  /**
   * Stops the agent: loops end, pending updates are flushed, tasks keep running to be reattached
   * by the next agent on this data dir. With `destroyAllocs` (a -dev agent, as Nomad's) every
   * allocation is destroyed instead — tasks killed, directories removed — and the drivers stop
   * their helper processes, so nothing is left running.
   */
  async shutdown(opts: { destroyAllocs?: boolean } = {}): Promise<void> {
    if (this.stopCtl.signal.aborted) return;
    this.stopCtl.abort();
    await Promise.allSettled(this.loops);
    const runners = [...this.runners.values()];
    if (opts.destroyAllocs) {
      await Promise.all(
        runners.map((r) => r.destroy().catch((err: unknown) => this.logger.warn({ alloc: r.allocId, err: errorMessage(err) }, 'destroying allocation failed'))),
      );
      this.runners.clear();
    } else {
      await Promise.all(runners.map((r) => r.shutdown()));
    }
    // Warm namespaces belong to no allocation: removed now (a killed agent's go with the next start's sweep).
    await this.network.close().catch((err: unknown) => this.logger.warn({ err: errorMessage(err) }, 'removing warm network namespaces failed'));
    await this.batcher.flush().catch(() => undefined);
    this.batcher.stop();
    // Destroyed allocations' deregistrations go out if the servers answer soon; otherwise the
    // servers remove them when the allocations end or the node is marked down.
    if (opts.destroyAllocs) await Promise.race([this.services.settled(), this.clock.sleep(SERVICES_SETTLE_MS).catch(() => undefined)]);
    this.services.stop();
    for (const d of this.drivers.values()) await d.shutdown({ stopHelpers: opts.destroyAllocs === true }).catch(() => undefined);
    this.store.close();
  }

  // ---- ClientHttpApi ----

  hasAlloc(allocId: string): boolean {
    return this.runners.has(allocId);
  }

  allocNamespace(allocId: string): string | undefined {
    return this.runners.get(allocId)?.alloc().Namespace;
  }

  allocDir(allocId: string): string | undefined {
    return this.runners.get(allocId)?.allocDir.root;
  }

  execSpec(allocId: string, task: string, command: string[]): ExecSpec {
    const tr = this.requireRunner(allocId).taskRunner(task);
    if (!tr) throw new ClientApiError(ClientApiErrorCode.TaskNotFound, `task "${task}" not found in allocation ${allocId}`);
    const h = tr.driverHandle();
    if (!h) throw new ClientApiError(ClientApiErrorCode.TaskNotRunning, `task "${task}" is not running`);
    return this.drivers.get(tr.taskDef().Driver)!.execSpec(h.taskId, command);
  }

  taskActionCommand(allocId: string, jobId: string, task: string, action: string): string[] {
    const runner = this.requireRunner(allocId);
    const tr = runner.taskRunner(task);
    if (!tr) throw new ClientApiError(ClientApiErrorCode.TaskNotFound, `task "${task}" not found in allocation ${allocId}`);
    return taskActionCommand(runner.alloc(), jobId, tr.taskDef(), action);
  }

  taskDriverCapabilities(allocId: string, task: string): DriverCapabilities {
    const tr = this.requireRunner(allocId).taskRunner(task);
    if (!tr) throw new ClientApiError(ClientApiErrorCode.TaskNotFound, `task "${task}" not found in allocation ${allocId}`);
    return this.drivers.get(tr.taskDef().Driver)?.capabilities() ?? { fsIsolation: FsIsolation.None };
  }

  async restartAlloc(allocId: string, task?: string): Promise<void> {
    for (const tr of this.selectTasks(allocId, task)) {
      if (tr.driverHandle()) await tr.restart('User requested restart');
      else if (task) throw new ClientApiError(ClientApiErrorCode.TaskNotRunning, `task "${task}" is not running`);
    }
  }

  async signalAlloc(allocId: string, task: string | undefined, signal: string): Promise<void> {
    if (!/^SIG[A-Z0-9]+$/.test(signal)) throw new ClientApiError(ClientApiErrorCode.BadSignal, `invalid signal "${signal}"`);
    for (const tr of this.selectTasks(allocId, task)) {
      if (tr.driverHandle()) await tr.signal(signal, 'User requested signal');
      else if (task) throw new ClientApiError(ClientApiErrorCode.TaskNotRunning, `task "${task}" is not running`);
    }
  }

  allocChecks(allocId: string): Record<string, CheckQueryResult> {
    return this.requireRunner(allocId).checkResults();
  }

  async allocStats(allocId: string): Promise<Record<string, TaskResourceUsage>> {
    const out: Record<string, TaskResourceUsage> = {};
    for (const tr of this.selectTasks(allocId, undefined)) {
      const h = tr.driverHandle();
      if (!h) continue;
      const d = this.drivers.get(tr.taskDef().Driver);
      const u = tr.latestUsage() ?? (await d?.taskStats(h.taskId).catch(() => null));
      if (u) out[tr.taskName] = u;
    }
    return out;
  }

  servers(): string[] {
    return this.config.connection.servers();
  }

  setServers(servers: string[]): void {
    this.config.connection.setServers(servers);
  }

  hostStats(): HostStats {
    return this.hostStatsCollector.collect(this.clock.now());
  }

  async collectAlloc(allocId: string): Promise<void> {
    const ar = this.requireRunner(allocId);
    if (!this.collectable(ar)) {
      throw new ClientApiError(ClientApiErrorCode.NotTerminal, `allocation ${allocId} is still running on this node; only terminal allocations are collected`);
    }
    this.runners.delete(allocId);
    // Collected here: not fetched again while the servers list it unchanged.
    const held = this.seen.get(allocId);
    if (held !== undefined) this.ignored.set(allocId, held);
    this.seen.delete(allocId);
    await ar.destroy();
  }

  async collectAllAllocs(): Promise<number> {
    const done = [...this.runners.values()].filter((ar) => this.collectable(ar));
    for (const ar of done) await this.collectAlloc(ar.allocId);
    return done.length;
  }

  /** Terminal for the servers (stopped, evicted, lost) or here (every task dead): Nomad's client GC only collects those. */
  private collectable(ar: AllocRunner): boolean {
    return isTerminalAlloc(ar.alloc()) || isTerminalClientStatus(ar.clientUpdate().ClientStatus);
  }

  nodeMeta(): NodeMetaResponse {
    return mergedMeta(this.config.meta ?? {}, loadDynamicMeta(this.store));
  }

  async applyNodeMeta(changes: unknown): Promise<NodeMetaResponse> {
    const dynamic = applyMetaChanges(loadDynamicMeta(this.store), changes);
    saveDynamicMeta(this.store, dynamic);
    const merged = mergedMeta(this.config.meta ?? {}, dynamic);
    this.node = { ...this.node, Meta: merged.Meta };
    this.nodeInfo = { ...this.nodeInfo, meta: merged.Meta };
    // Registered again now, so the servers (and constraints on meta) see it when this returns;
    // on failure the heartbeat loop registers it later.
    await this.register().catch((err: unknown) => {
      this.registered = false;
      this.logger.warn({ err: errorMessage(err) }, 'registering node with new metadata failed; will retry');
    });
    return merged;
  }

  private requireRunner(allocId: string): AllocRunner {
    const ar = this.runners.get(allocId);
    if (!ar) throw new ClientApiError(ClientApiErrorCode.AllocNotFound, `allocation ${allocId} not found on this node`);
    return ar;
  }

  private selectTasks(allocId: string, task: string | undefined): TaskRunner[] {
    const ar = this.requireRunner(allocId);
    if (task === undefined) return [...ar.taskRunners().values()];
    const tr = ar.taskRunner(task);
    if (!tr) throw new ClientApiError(ClientApiErrorCode.TaskNotFound, `task "${task}" not found in allocation ${allocId}`);
    return [tr];
  }

  // ---- node ----

  private async fingerprint(): Promise<void> {
    const id = this.config.identity ?? loadNodeIdentity(this.config.dataDir);
    const host = this.config.host ?? fingerprintHost(this.config.dataDir);
    const drv = await fingerprintDrivers([...this.drivers.values()], this.clock.now());
    const name = this.config.nodeName ?? host.attributes['unique.hostname']!;
    this.hostStatsCollector = new HostStatsCollector(this.config.dataDir, host.resources.Cpu.CpuShares);
    const dc = this.config.datacenter ?? 'dc1';
    const ip = advertisedIp(this.config.httpAddr);
    // A given host carries its CNI plugins' attributes too: running every plugin for its version
    // is a process per plugin, which 10,000 simulated nodes cannot each afford.
    const cni = this.config.host ? {} : await fingerprintCniPlugins(clientNetworkConfig(this.config.network).cniPath);
    this.hostVolumeManager = new HostVolumeManager({
      volumesDir: this.config.hostVolumesDir ?? join(this.config.dataDir, 'host_volumes'),
      pluginDir: this.config.hostVolumePluginDir ?? join(this.config.dataDir, 'host_volume_plugins'),
      store: this.store,
      connection: this.config.connection,
      clock: this.clock,
      logger: this.logger,
      onChange: (dynamic) => this.setDynamicHostVolumes(dynamic),
    });
    const attributes = { ...host.attributes, ...drv.attributes, ...cni, ...this.hostVolumeManager.pluginAttributes(), 'unique.network.ip-address': ip };
    this.staticHostVolumes = fingerprintHostVolumes(this.config.hostVolumes);
    // The servers never place a dynamic volume under a static one's name; the static one wins if they did.
    const hostVolumes = { ...this.hostVolumeManager.fingerprint(), ...this.staticHostVolumes };
    this.node = newNode({
      ID: id.id,
      SecretID: id.secretId,
      Datacenter: dc,
      Name: name,
      HTTPAddr: this.config.httpAddr,
      Attributes: attributes,
      NodeResources: { ...host.resources, Networks: [hostNetwork(ip)] },
      Meta: mergedMeta(this.config.meta ?? {}, loadDynamicMeta(this.store)).Meta,
      NodeClass: this.config.nodeClass ?? '',
      NodePool: this.config.nodePool ?? 'default',
      Drivers: drv.drivers,
      HostVolumes: hostVolumes,
      StatusUpdatedAt: Math.floor(this.clock.now() / 1000),
    });
    this.nodeInfo = {
      id: id.id,
      name,
      datacenter: dc,
      region: this.config.region ?? 'global',
      nodeClass: this.node.NodeClass,
      attributes,
      meta: this.node.Meta,
      hostVolumes,
    };
  }

  /** The node offers `dynamic` beside its configured volumes; resolves once registered with them (or failed to be: retried). */
  private async setDynamicHostVolumes(dynamic: Record<string, ClientHostVolumeConfig>): Promise<void> {
    const hostVolumes = { ...dynamic, ...this.staticHostVolumes };
    this.node = { ...this.node, HostVolumes: hostVolumes };
    this.nodeInfo = { ...this.nodeInfo, hostVolumes };
    await this.register().catch((err: unknown) => {
      this.registered = false;
      this.logger.warn({ err: errorMessage(err) }, 'registering node with new host volumes failed; will retry');
    });
  }

  /**
   * Fingerprints the drivers again now and then; when one changed (an engine came up or went
   * away), the node is registered again with the new drivers and attributes, as Nomad updates it.
   */
  private async driverFingerprintLoop(): Promise<void> {
    const signal = this.stopCtl.signal;
    while (!signal.aborted) {
      await this.clock.sleep(DRIVER_FINGERPRINT_MS, signal).catch(() => undefined);
      if (signal.aborted) break;
      const drv = await fingerprintDrivers([...this.drivers.values()], this.clock.now());
      if (!driversChanged(this.node.Drivers ?? {}, drv.drivers)) continue;
      const attributes = withDriverAttributes(this.node.Attributes, drv.attributes);
      this.node = { ...this.node, Attributes: attributes, Drivers: drv.drivers };
      this.nodeInfo = { ...this.nodeInfo, attributes };
      this.logger.info({ drivers: Object.keys(drv.drivers).filter((k) => drv.drivers[k]!.Detected) }, 'driver fingerprint changed; updating the node');
      this.registered = false;
    }
  }

  private async register(): Promise<void> {
    const r = await this.config.connection.registerNode({ ...this.node, Status: 'ready' }, loadIntroToken(this.config.dataDir, this.config.introToken));
    this.heartbeatTtlMs = r.heartbeatTtlMs;
    this.registered = true;
    this.logger.info({ node: this.node.ID }, 'node registered');
    // Registrations written before (or removed while the node was down) are written again.
    this.services.resync();
  }

  /** Registers, then heartbeats each time the TTL the server gave runs out (heartbeat-wait.ts); re-registers when the server forgot us. */
  private async heartbeatLoop(): Promise<void> {
    let failures = 0;
    const signal = this.stopCtl.signal;
    while (!signal.aborted) {
      let waitMs: number;
      try {
        if (!this.registered) await this.register();
        else this.heartbeatTtlMs = (await this.config.connection.heartbeat(this.node.ID, 'ready' as NodeStatus)).heartbeatTtlMs;
        failures = 0;
        waitMs = heartbeatWaitMs(this.heartbeatTtlMs);
      } catch (err) {
        if (err instanceof ClientError && err.code === ClientErrorCode.NodeUnknown) this.registered = false;
        else if (!this.registered) this.logger.warn({ err: errorMessage(err) }, 'registering node failed; retrying');
        else this.logger.warn({ err: errorMessage(err) }, 'heartbeat failed; retrying');
        // A failure after registration may mean a restarted server: register again to be safe.
        if (failures > 1) this.registered = false;
        waitMs = Math.min(RETRY_BASE_MS * 2 ** failures, RETRY_MAX_MS, this.heartbeatTtlMs / 2);
        failures++;
      }
      await this.clock.sleep(waitMs, signal).catch(() => undefined);
    }
  }

  /** Blocking-query loop on the node's allocations (and, by its index, host volumes); applies each answer. */
  private async watchLoop(): Promise<void> {
    let index = 0;
    let failures = 0;
    const signal = this.stopCtl.signal;
    while (!signal.aborted) {
      if (!this.registered) {
        await this.clock.sleep(50, signal).catch(() => undefined);
        continue;
      }
      try {
        const r = await this.config.connection.watchAllocs(this.node.ID, index, WATCH_WAIT_MS, signal);
        if (signal.aborted) break;
        // The same answer says when the node's host volumes changed: fetched by their manager.
        if (r.hostVolumesIndex !== undefined) this.hostVolumeManager.noteIndex(r.hostVolumesIndex);
        // Only the allocations whose AllocModifyIndex differs from what we hold are pulled
        // (Nomad's client: Node.GetClientAllocs, then Alloc.GetAllocs of the changed ones).
        const pull = Object.keys(r.allocs).filter((id) => this.needsPull(id, r.allocs[id]!));
        const fetched: Allocation[] = [];
        for (let i = 0; i < pull.length; i += MAX_ALLOC_IDS_PER_FETCH) {
          fetched.push(...(await this.config.connection.fetchAllocs(this.node.ID, pull.slice(i, i + MAX_ALLOC_IDS_PER_FETCH), signal)));
        }
        if (signal.aborted) break;
        // An index going backwards means a server without our history: start over.
        index = r.index < index ? 0 : r.index;
        this.applyAllocChanges(r.allocs, fetched);
        failures = 0;
      } catch (err) {
        if (signal.aborted) break;
        this.logger.warn({ err: errorMessage(err) }, 'watching allocations failed; retrying');
        if (err instanceof ClientError && err.code === ClientErrorCode.NodeUnknown) this.registered = false;
        await this.clock.sleep(Math.min(RETRY_BASE_MS * 2 ** failures, RETRY_MAX_MS), signal).catch(() => undefined);
        failures++;
      }
    }
  }

  /** Diffs the server's allocations against the runners: start new, update changed, stop removed. */
  applyAllocs(allocs: Allocation[]): void {
    const listed: Record<string, number> = {};
    for (const a of allocs) listed[a.ID] = a.AllocModifyIndex;
    this.applyAllocChanges(listed, allocs.filter((a) => this.needsPull(a.ID, a.AllocModifyIndex)));
  }

  /**
   * Whether the allocation listed at `modifyIndex` must be fetched: new to us, or at another
   * index than the version we hold (older too: a restored snapshot, see applyAllocChanges).
   */
  private needsPull(id: string, modifyIndex: number): boolean {
    if (this.runners.has(id)) return this.seen.get(id) !== modifyIndex;
    return this.ignored.get(id) !== modifyIndex;
  }

  /**
   * Applies one listing of the node's allocations (ID → AllocModifyIndex) and the allocations
   * fetched for it: starts new ones, updates changed ones, stops those no longer listed.
   */
  private applyAllocChanges(listed: Record<string, number>, fetched: Allocation[]): void {
    const jobs = fetched.length > 0 ? this.heldJobs() : undefined;
    for (const fresh of fetched) {
      // A job we already hold at the same JobModifyIndex is shared, not kept once per allocation.
      // The servers' copy of the task states is only what this client reported (up to ten events
      // a task); the runners hold the real ones, so it is not kept either.
      const held = fresh.Job ? jobs?.get(jobKey(fresh.Job)) : undefined;
      const a: Allocation = { ...fresh, ...(held ? { Job: held } : {}), TaskStates: null };
      const ar = this.runners.get(a.ID);
      if (!ar) {
        // Terminal allocations we do not run (e.g. GC'd here already) are ignored, and not
        // fetched again until they change.
        if (isTerminalAlloc(a)) {
          this.ignored.set(a.ID, a.AllocModifyIndex);
          continue;
        }
        this.ignored.delete(a.ID);
        this.addRunner(a);
        if (a.Job) jobs?.set(jobKey(a.Job), a.Job);
      } else if (a.AllocModifyIndex > (this.seen.get(a.ID) ?? -1)) {
        this.seen.set(a.ID, a.AllocModifyIndex);
        // Servers may send the alloc without its job when unchanged; keep the one we have.
        ar.update(a.Job ? a : { ...a, Job: ar.alloc().Job });
      } else if (a.AllocModifyIndex < (this.seen.get(a.ID) ?? -1)) {
        // The servers went back in time (a snapshot was restored): their copy predates what this
        // client has done with the alloc. Take their desired state, and report ours again so the
        // restored state learns what really runs (a task stopped since is then replaced).
        this.seen.set(a.ID, a.AllocModifyIndex);
        ar.update(a.Job ? a : { ...a, Job: ar.alloc().Job });
        this.batcher.enqueue(ar.clientUpdate());
      }
    }
    for (const [id, ar] of this.runners) {
      if (!Object.hasOwn(listed, id)) this.removeRunner(id, ar);
    }
    for (const id of this.ignored.keys()) {
      if (!Object.hasOwn(listed, id)) this.ignored.delete(id);
    }
  }

  /** The jobs the runners hold, by namespace, ID and JobModifyIndex. */
  private heldJobs(): Map<string, Job> {
    const jobs = new Map<string, Job>();
    for (const ar of this.runners.values()) {
      const job = ar.alloc().Job;
      if (job) jobs.set(jobKey(job), job);
    }
    return jobs;
  }

  private addRunner(alloc: Allocation, restored?: StoredAlloc): AllocRunner {
    const ar = this.newRunner(alloc, restored);
    this.runners.set(alloc.ID, ar);
    this.seen.set(alloc.ID, alloc.AllocModifyIndex);
    void ar.run();
    return ar;
  }

  private newRunner(alloc: Allocation, restored?: StoredAlloc): AllocRunner {
    return new AllocRunner({
      alloc,
      dataDir: this.config.dataDir,
      drivers: this.drivers,
      node: this.nodeInfo,
      store: this.store,
      clock: this.clock,
      random: this.random,
      logger: this.logger,
      onUpdate: (u: AllocClientUpdate) => this.batcher.enqueue(u),
      restored,
      hostEnv: this.hostEnv,
      userPolicy: this.userPolicy,
      network: this.network,
      ...(this.config.taskApi ? { taskApi: this.config.taskApi } : {}),
      ...(this.config.allocDirsOnDisk === false ? { allocDirsOnDisk: false } : {}),
      variables: (req, signal) => this.config.connection.readTaskVariables(req, signal),
      identities: (req, signal) => this.config.connection.signTaskIdentities(req, signal),
      onServices: (allocId, regs) => this.services.set(allocId, regs),
    });
  }

  private removeRunner(id: string, ar: AllocRunner): void {
    this.runners.delete(id);
    this.seen.delete(id);
    void ar.destroy().catch((err: unknown) => this.logger.warn({ alloc: id, err: errorMessage(err) }, 'destroying allocation failed'));
  }

  /** Recreates runners for every allocation in the state DB; they reattach to running tasks. */
  private async restore(): Promise<void> {
    const stored = this.store.allAllocs();
    // Networks recorded for allocations this client no longer holds (a dead agent's leftovers).
    const swept = await this.network.sweep(new Set(stored.map((sa) => sa.alloc.ID)));
    if (swept.length > 0) this.logger.info({ allocs: swept }, 'removed group networks left by allocations no longer held');
    for (const sa of stored) {
      try {
        this.addRunner(sa.alloc, sa);
      } catch (err) {
        this.logger.error({ alloc: sa.alloc.ID, err: errorMessage(err) }, 'restoring allocation failed');
      }
    }
  }
}

/** What identifies a version of a job's spec: allocations at the same key carry the same job. */
function jobKey(job: Job): string {
  return `${job.Namespace}\u0000${job.ID}\u0000${job.JobModifyIndex}`;
}

/** The host part of the client's advertised "host:port" ("[::1]:4646" → "::1"); loopback when empty. */
function advertisedIp(httpAddr: string): string {
  const host = httpAddr.startsWith('[') ? httpAddr.slice(1, httpAddr.indexOf(']')) : httpAddr.slice(0, Math.max(0, httpAddr.lastIndexOf(':')));
  return host === '' || host === '0.0.0.0' ? '127.0.0.1' : host;
}
