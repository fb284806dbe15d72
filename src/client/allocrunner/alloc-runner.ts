/**
 * The alloc runner: runs one allocation on this node. It builds the allocation directory,
 * creates a task runner per task, lets them start in lifecycle order (the Coordinator), kills
 * siblings when a task fails or the leader dies, stops sidecars when the main tasks are dead,
 * derives the allocation's client status, and reports it through `onUpdate` (the client
 * batches those to the servers).
 *
 * Stop (DesiredStatus stop, or kill()): group shutdown_delay, then the leader, then the other
 * tasks are killed; poststop tasks run once everything else is dead — unless max_run_duration
 * ended the allocation, which skips them (they end dead, never started), as Nomad does.
 */
import type { TaskApiConnections } from '../taskrunner/hooks/task-api-hook.js';
import type { Logger } from 'pino';
import type { AllocDeploymentStatus, Allocation, TaskEvent, TaskState } from '../../structs/alloc.js';
import { TaskEventType } from '../../structs/alloc.js';
import type { Task } from '../../structs/job.js';
import { nanosToMs } from '../../structs/duration.js';
import type { Clock, RandomSource } from '../../time/clock.js';
import type { Driver } from '../../drivers/driver.js';
import type { AllocClientUpdate } from '../../structs/alloc.js';
import { AllocDir } from '../allocdir/alloc-dir.js';
import type { NodeInfo } from '../taskenv/task-env.js';
import type { ClientStateStore, StoredAlloc } from '../state/state-db.js';
import { TaskRunner } from '../taskrunner/task-runner.js';
import { MissingDriver } from '../taskrunner/missing-driver.js';
import { newTaskEvent } from '../taskrunner/task-event.js';
import type { AnyTaskHook, TaskIdentitySigner, TaskVariableReader } from '../taskrunner/interfaces.js';
import { Coordinator, LifecycleStage, taskLifecycleStage } from './tasklifecycle/coordinator.js';
import { allocClientStatus } from './alloc-status.js';
import { killedByMaxRunDuration } from '../taskrunner/hooks/max-run-duration-hook.js';
import { HealthTracker, healthSettings, mainTaskNames } from './health-tracker.js';
import type { TaskUserPolicy } from '../taskrunner/task-user-policy.js';
import type { NetworkIsolation } from '../../drivers/driver.js';
import { groupNetwork, isolatedMode, type AllocNetwork, type AllocNetworkConfigurator } from '../network/alloc-network-configurator.js';
import type { ServiceRegistrationInput } from '../../structs/service-registration.js';
import { allocActiveServices, hasNomadServices } from '../serviceregistration/alloc-service-registrations.js';
import { AllocCheckRunner, type CheckQueryResult } from '../serviceregistration/alloc-check-runner.js';
import type { HostEnvLookup } from '../taskenv/host-env.js';

/** Everything an alloc runner depends on. */
export interface AllocRunnerConfig {
  alloc: Allocation;
  dataDir: string;
  drivers: ReadonlyMap<string, Driver>;
  node: NodeInfo;
  store: ClientStateStore;
  clock: Clock;
  random: RandomSource;
  logger: Logger;
  /** Receives the allocation's client-side state after every change. */
  onUpdate: (update: AllocClientUpdate) => void;
  /** Set when restoring after an agent restart. */
  restored?: StoredAlloc;
  /** The agent's environment as its tasks may read it (already filtered by the client's env.denylist). */
  hostEnv?: HostEnvLookup;
  /** Reads variables for the tasks' templates from the servers. */
  variables?: TaskVariableReader;
  /** Signs the tasks' workload identities on the servers. */
  identities?: TaskIdentitySigner;
  /** Hooks factory override for tests. */
  hooks?: (task: Task) => AnyTaskHook[] | undefined;
  /**
   * Receives the native service registrations the allocation should have, after every change
   * (the client's ServiceRegistrar writes the difference to the servers).
   */
  onServices?: (allocId: string, regs: ServiceRegistrationInput[]) => void;
  /** The client's user.denylist / user.checked_drivers; Nomad's defaults when not given. */
  userPolicy?: TaskUserPolicy;
  /** Whether the allocation's directories are built on disk (default true; see AllocDir). */
  allocDirsOnDisk?: boolean;
  /** Sets up group networks (bridge, none, cni/*); without it every allocation runs in host mode. */
  network?: AllocNetworkConfigurator;
  /** The agent's Task API, served on each task's `secrets/api.sock`. */
  taskApi?: TaskApiConnections;
}

interface StartWaiter {
  task: string;
  resolve: () => void;
}

/** Runs one allocation. Create, then `run()`. */
export class AllocRunner {
  readonly allocId: string;
  readonly allocDir: AllocDir;
  private current: Allocation;
  private readonly runners = new Map<string, TaskRunner>();
  private readonly coordinator: Coordinator;
  private readonly poststop = new Set<string>();
  private readonly sidecars = new Set<string>();
  private states: Record<string, TaskState> = {};
  private waiters: StartWaiter[] = [];
  private siblingsKilled = false;
  private killing: Promise<void> | null = null;
  /** Cuts the group's shutdown_delay short (an update asking for NoShutdownDelay). */
  private readonly groupDelayCut = new AbortController();
  private destroyed = false;
  private done: Promise<void> | null = null;
  /** Building the alloc dir and reattaching restored tasks, once started; kill() waits for it. */
  private prepared: Promise<void> | null = null;
  /** Decides the deployment health of an allocation placed by a deployment. */
  private health: HealthTracker | null = null;
  private deploymentStatus: AllocDeploymentStatus | null = null;
  /** The group network once set up (or restored); null in host mode or before. */
  private net: AllocNetwork | null = null;
  /** The set-up in flight or done; a failed one is forgotten so the next task start retries. */
  private netSetup: Promise<AllocNetwork | null> | null = null;
  /** The teardown in flight or done (null again after a failed one). */
  private netTeardown: Promise<void> | null = null;
  /** Set by shutdown(): runners return with tasks left running, so the network stays. */
  private shuttingDown = false;
  /** The native service checks of the allocation (null: its group has no native services). */
  private readonly checks: AllocCheckRunner | null = null;

  /** The runner's configuration without the allocation it was created with (see the constructor). */
  private readonly cfg: Omit<AllocRunnerConfig, 'alloc'>;

  constructor(config: AllocRunnerConfig) {
    // Only the newest version of the allocation is kept (this.current): holding on to the one
    // the runner was created with kept a second copy of every updated allocation.
    const cfg = config;
    const { alloc: _created, ...rest } = config;
    this.cfg = rest;
    this.current = cfg.alloc;
    this.allocId = cfg.alloc.ID;
    this.allocDir = new AllocDir(cfg.dataDir, cfg.alloc.ID, { onDisk: cfg.allocDirsOnDisk ?? true });
    const tasks = this.groupTasks();
    this.coordinator = new Coordinator(tasks);
    for (const task of tasks) {
      const stage = taskLifecycleStage(task);
      if (stage === LifecycleStage.Poststop) this.poststop.add(task.Name);
      if (task.Lifecycle?.Sidecar) this.sidecars.add(task.Name);
      const tr = new TaskRunner({
        alloc: cfg.alloc,
        task,
        allocDir: this.allocDir,
        driver: cfg.drivers.get(task.Driver) ?? new MissingDriver(task.Driver),
        node: cfg.node,
        store: cfg.store,
        clock: cfg.clock,
        random: cfg.random,
        logger: cfg.logger,
        onStateChange: (name, st) => this.taskStateChanged(name, st),
        waitForStart: (signal) => this.waitForStart(task.Name, signal),
        restored: cfg.restored?.tasks[task.Name],
        hostEnv: cfg.hostEnv,
        hooks: cfg.hooks?.(task),
        ...(cfg.variables ? { variables: cfg.variables } : {}),
        ...(cfg.identities ? { identities: cfg.identities } : {}),
        ...(cfg.userPolicy ? { userPolicy: cfg.userPolicy } : {}),
        ...(cfg.taskApi ? { taskApi: cfg.taskApi } : {}),
        ...(cfg.network && isolatedMode(groupNetwork(cfg.alloc)?.Mode) ? { groupNetwork: () => this.networkIsolation() } : {}),
      });
      this.runners.set(task.Name, tr);
      this.states[task.Name] = tr.state();
    }
    cfg.store.putAlloc(cfg.alloc);
    // No closure below may name `cfg` (the created allocation): they would keep it alive.
    const groupName = cfg.alloc.TaskGroup;
    const group = cfg.alloc.Job?.TaskGroups.find((g) => g.Name === groupName);
    if (hasNomadServices(group)) {
      this.checks = new AllocCheckRunner({
        allocId: cfg.alloc.ID,
        group: cfg.alloc.TaskGroup,
        clock: cfg.clock,
        logger: cfg.logger,
        onRestart: (task, reason) => {
          void this.runners.get(task)?.restart(reason, true).catch((err: unknown) => this.cfg.logger.warn({ alloc: this.allocId, task, err: String(err) }, 'check_restart: restart failed'));
        },
        onChange: () => this.health?.checksChanged(this.checks?.allPassing() ?? true),
      });
    }
    const settings = healthSettings(group?.Update ?? null);
    if (cfg.alloc.DeploymentID && settings && (cfg.alloc.DeploymentStatus?.Healthy ?? null) === null) {
      this.health = new HealthTracker({
        clock: cfg.clock,
        ...settings,
        mainTasks: mainTaskNames(tasks),
        checksRequired: group?.Update?.HealthCheck === 'checks' && this.checks !== null,
        onHealth: (healthy) => {
          this.deploymentStatus = {
            Healthy: healthy,
            Timestamp: new Date(this.cfg.clock.now()).toISOString(),
            Canary: this.current.DeploymentStatus?.Canary ?? false,
            ModifyIndex: 0,
          };
          this.report();
        },
      });
    }
  }

  /** The allocation as last received from the servers. */
  alloc(): Allocation {
    return this.current;
  }

  /** The task runner of a task, if the allocation has that task. */
  taskRunner(name: string): TaskRunner | undefined {
    return this.runners.get(name);
  }

  /** The task runners by task name. */
  taskRunners(): ReadonlyMap<string, TaskRunner> {
    return this.runners;
  }

  /** The allocation's client-side view, as it would be sent to the servers. */
  clientUpdate(): AllocClientUpdate {
    const st = allocClientStatus(this.states);
    return {
      ID: this.allocId,
      NodeID: this.current.NodeID,
      ClientStatus: st.status,
      ClientDescription: st.description,
      // A copy of the map, sharing the task states: each is a snapshot the alloc runner replaces
      // (TaskRunner.state()), never changes. A deep copy per report was the simulator's second
      // costliest client function; in-process connections (-dev) copy what they hand the server.
      TaskStates: { ...this.states },
      ...(this.net ? { NetworkStatus: { InterfaceName: this.net.interfaceName, Address: this.net.address, DNS: this.dnsStatus() } } : {}),
      ...(this.deploymentStatus ? { DeploymentStatus: { ...this.deploymentStatus } } : {}),
    };
  }

  /** Whether every task runner has finished. */
  isDone(): boolean {
    return Object.values(this.states).every((s) => s.State === 'dead');
  }

  /**
   * Starts every task runner (restoring them first when the alloc was restored) and resolves
   * when all of them have returned. Idempotent.
   */
  run(): Promise<void> {
    this.done ??= this.runAll();
    return this.done;
  }

  private async runAll(): Promise<void> {
    await this.prepare();
    if (!this.cfg.restored) this.coordinator.taskStatesUpdated(this.states);
    this.releaseWaiters();
    this.report();
    if (this.current.DesiredStatus !== 'run') void this.kill();
    else {
      this.health?.start();
      this.health?.update(this.states);
    }
    await Promise.all([...this.runners.values()].map((tr) => tr.run()));
    // Every task has stopped for good (not an agent shutdown, which leaves them running).
    if (!this.shuttingDown && this.isDone()) await this.teardownNetwork();
  }

  /**
   * The namespace tasks join: set up before the first task starts (once; again after a failed
   * attempt), restored after an agent restart. Throws the set-up's NetworkError.
   */
  private async networkIsolation(): Promise<NetworkIsolation | null> {
    const network = this.cfg.network;
    if (!network) return null;
    this.netSetup ??= (async () => {
      const restored = this.cfg.restored ? await network.restore(this.allocId) : null;
      const net = restored ?? (await network.setup(this.current));
      this.net = net;
      if (net && !restored) this.cfg.logger.info({ alloc: this.allocId, mode: net.mode, address: net.address }, 'group network set up');
      this.report();
      return net;
    })();
    const pending = this.netSetup;
    let net: AllocNetwork | null;
    try {
      net = await pending;
    } catch (err) {
      if (this.netSetup === pending) this.netSetup = null;
      throw err;
    }
    if (!net) return null;
    return {
      path: net.netnsPath,
      address: net.address,
      ...(net.resolvConf ? { resolvConf: net.resolvConf } : {}),
      ...(net.hostsFile ? { hostsFile: net.hostsFile } : {}),
      ...(net.hostname ? { hostname: net.hostname } : {}),
      ...(net.sandboxId ? { sandboxId: net.sandboxId } : {}),
    };
  }

  /**
   * Removes the group network (CNI DEL, namespace). The end of the last task and destroy() both
   * call it, possibly at once: one teardown runs, the other waits for it; after a failure
   * (logged) the next call tries again, and an agent start sweeps what is still recorded.
   */
  private teardownNetwork(): Promise<void> {
    const network = this.cfg.network;
    if (!network || !isolatedMode(groupNetwork(this.current)?.Mode)) return Promise.resolve();
    this.netTeardown ??= (async () => {
      await this.netSetup?.catch(() => undefined);
      try {
        await network.teardown(this.allocId);
      } catch (err) {
        this.netTeardown = null;
        this.cfg.logger.warn({ alloc: this.allocId, err: (err as Error).message }, 'group network teardown failed; the next agent start retries');
      }
    })();
    return this.netTeardown;
  }

  private dnsStatus(): { Servers: string[]; Searches: string[]; Options: string[] } | null {
    const dns = groupNetwork(this.current)?.DNS;
    return dns ? { Servers: [...dns.Servers], Searches: [...dns.Searches], Options: [...dns.Options] } : null;
  }

  /** Builds the alloc dir and, for a restored alloc, reattaches its task runners. Once. */
  private prepare(): Promise<void> {
    this.prepared ??= (async () => {
      await this.allocDir.build();
      if (!this.cfg.restored) return;
      // The namespace of a running allocation outlives the agent: find it again.
      if (this.cfg.network && isolatedMode(groupNetwork(this.current)?.Mode) && !this.isDone()) {
        await this.networkIsolation().catch((err: unknown) => this.cfg.logger.warn({ alloc: this.allocId, err: (err as Error).message }, 'restoring group network failed'));
      }
      for (const tr of this.runners.values()) await tr.restore();
      for (const [name, tr] of this.runners) this.states[name] = tr.state();
      this.skipPoststopAfterDeadline();
      this.coordinator.restore(this.states);
    })();
    return this.prepared;
  }

  /** Applies a new version of the allocation from the servers. */
  update(alloc: Allocation): void {
    this.current = alloc;
    this.cfg.store.putAlloc(alloc);
    if (alloc.DesiredStatus !== 'run') {
      // Deregistered before the shutdown delay, so callers stop finding it while it drains (Nomad's order).
      this.syncServices();
      // The stopping version decides how the tasks stop (DesiredTransition.NoShutdownDelay).
      for (const tr of this.runners.values()) tr.takeStoppingAlloc(alloc);
      if (alloc.DesiredTransition?.NoShutdownDelay) this.groupDelayCut.abort();
      void this.kill();
      return;
    }
    for (const tr of this.runners.values()) tr.update(alloc);
  }

  /**
   * Stops the allocation: group shutdown_delay, the leader first, then the other non-poststop
   * tasks; poststop tasks then run. Resolves when every task runner is done. Idempotent.
   */
  kill(): Promise<void> {
    this.killing ??= this.killTasks();
    return this.killing;
  }

  private async killTasks(): Promise<void> {
    this.health?.stop();
    this.checks?.stop();
    // A restored alloc may be reattaching to live tasks (driver recovery can take seconds);
    // killing before that finishes would mark them dead and leave the processes running.
    if (this.prepared || this.cfg.restored) {
      await this.prepare().catch((err: unknown) => this.cfg.logger.warn({ alloc: this.allocId, err: String(err) }, 'preparing allocation before kill failed'));
    }
    const anyRunning = Object.values(this.states).some((s) => s.State === 'running');
    const delayMs = nanosToMs(this.groupShutdownDelay());
    if (anyRunning && delayMs > 0 && !this.current.DesiredTransition?.NoShutdownDelay) {
      await this.cfg.clock.sleep(delayMs, this.groupDelayCut.signal).catch(() => undefined);
    }
    const live = [...this.runners.values()].filter((tr) => !this.poststop.has(tr.taskName));
    const leaders = live.filter((tr) => tr.isLeader());
    await Promise.all(leaders.map((tr) => tr.kill()));
    await Promise.all(live.filter((tr) => !tr.isLeader()).map((tr) => tr.kill()));
    // Poststop tasks run now (the coordinator opens their gate); wait for them.
    await Promise.all([...this.runners.values()].map((tr) => tr.wait()));
  }

  /** Kills the allocation, removes its directory and forgets it in the state DB. */
  async destroy(): Promise<void> {
    if (this.destroyed) return;
    this.destroyed = true;
    await this.kill();
    // Poststop tasks that never ran (alloc destroyed before it got that far) are killed too.
    await Promise.all([...this.runners.values()].map((tr) => tr.kill()));
    await this.teardownNetwork();
    await this.allocDir.destroy();
    this.cfg.store.deleteAlloc(this.allocId);
    this.cfg.onServices?.(this.allocId, []);
  }

  /** Stops the runners and leaves the tasks running (agent shutdown). */
  async shutdown(): Promise<void> {
    this.shuttingDown = true;
    this.health?.stop();
    this.checks?.stop();
    for (const w of this.waiters) w.resolve();
    await Promise.all([...this.runners.values()].map((tr) => tr.shutdown()));
  }

  // ---- task coordination ----

  private waitForStart(task: string, signal: AbortSignal): Promise<void> {
    if (this.coordinator.isAllowed(task)) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const w: StartWaiter = { task, resolve };
      this.waiters.push(w);
      signal.addEventListener(
        'abort',
        () => {
          this.waiters = this.waiters.filter((x) => x !== w);
          reject(signal.reason);
        },
        { once: true },
      );
    });
  }

  /**
   * Once max_run_duration has ended a task (its Killing event says so), the allocation's poststop
   * tasks never start: the coordinator keeps their gate shut and they are killed while waiting,
   * ending dead with no StartedAt. Called before the coordinator sees the new states, so the gate
   * the last main task's death would open stays shut.
   */
  private skipPoststopAfterDeadline(): void {
    if (this.poststop.size === 0) return;
    const timedOut = [...this.runners.keys()].some((name) => !this.poststop.has(name) && killedByMaxRunDuration(this.states[name] ?? {}));
    if (!timedOut) return;
    this.coordinator.skipPoststop();
    for (const name of this.poststop) {
      if (this.states[name]?.State === 'pending') void this.runners.get(name)?.kill();
    }
  }

  private releaseWaiters(): void {
    const ready = this.waiters.filter((w) => this.coordinator.isAllowed(w.task));
    this.waiters = this.waiters.filter((w) => !ready.includes(w));
    for (const w of ready) w.resolve();
  }

  private taskStateChanged(name: string, st: TaskState): void {
    const prev = this.states[name];
    this.states[name] = st;
    this.skipPoststopAfterDeadline();
    this.coordinator.taskStatesUpdated(this.states);
    this.releaseWaiters();
    if (st.State === 'dead' && prev?.State !== 'dead') this.handleTaskDeath();
    this.health?.update(this.states);
    this.report();
  }

  /** Kills the live tasks when a task failed, the leader died, or only sidecars remain. */
  private handleTaskDeath(): void {
    if (this.siblingsKilled || this.killing) return;
    const now = this.cfg.clock.now();
    let reason: (() => TaskEvent) | null = null;
    const live: TaskRunner[] = [];
    for (const [name, tr] of this.runners) {
      if (this.poststop.has(name)) continue;
      const s = this.states[name]!;
      if (s.State !== 'dead') {
        live.push(tr);
        continue;
      }
      if (s.Failed) reason = () => newTaskEvent(TaskEventType.SiblingFailed, now, { FailedSibling: name });
      else if (tr.isLeader() && !reason) reason = () => newTaskEvent(TaskEventType.LeaderDead, now);
    }
    if (!reason && this.sidecars.size > 0 && live.length > 0 && live.every((tr) => this.sidecars.has(tr.taskName))) {
      reason = () => newTaskEvent(TaskEventType.MainDead, now);
    }
    if (!reason || live.length === 0) return;
    this.siblingsKilled = true;
    const make = reason;
    for (const tr of live) void tr.kill(make());
  }

  private report(): void {
    this.cfg.onUpdate(this.clientUpdate());
    this.syncServices();
  }

  /** The latest result of each native service check (GET /v1/client/allocation/:id/checks). */
  checkResults(): Record<string, CheckQueryResult> {
    return this.checks?.results() ?? {};
  }

  /** Tells the registrar what the allocation should have registered now, and runs their checks. */
  private syncServices(): void {
    if (!this.checks) return;
    const active = this.destroyed ? [] : allocActiveServices(this.current, this.cfg.node, this.states);
    this.cfg.onServices?.(this.allocId, active.map((a) => a.reg));
    this.checks.sync(active);
  }

  private groupTasks(): Task[] {
    return this.current.Job?.TaskGroups.find((g) => g.Name === this.current.TaskGroup)?.Tasks ?? [];
  }

  private groupShutdownDelay(): number {
    return this.current.Job?.TaskGroups.find((g) => g.Name === this.current.TaskGroup)?.ShutdownDelay ?? 0;
  }
}
