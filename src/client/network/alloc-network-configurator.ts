/**
 * Gives an allocation the group network its `network { mode }` asks for, on this client:
 *
 *   host       nothing: the tasks share the host's network (setup answers null)
 *   none       a named network namespace with only its loopback
 *   bridge     a namespace on the client's bridge through Nomad's conflist (bridgeConflist):
 *              loopback, bridge and firewall run as plugins; the ports are forwarded with the
 *              portmap plugin's own rules, written in one iptables-restore (host-port-forward.ts)
 *   cni/<name> a namespace set up by the conflist named <name> in cni_config_dir
 *
 * What was set up is recorded in `<stateDir>/<alloc id>.json` before anything is created, so
 * an agent that restarts finds the namespace of a running allocation again (restore), and one
 * that starts removes what allocations it no longer holds left behind (sweep): the CNI DEL
 * chain (veth, IPAM lease, iptables chains) with the recorded conflist, then the namespace.
 * Calls for one allocation are not concurrent (its alloc runner serializes them).
 *
 * A group with a task of a driver that must own the namespace (docker: its tasks can only join
 * another container's network) gets its namespace from that driver's sandbox — the pause
 * container — named after the allocation (`ip netns attach`), so CNI, exec and raw_exec tasks
 * use the same /var/run/netns/<alloc id> path either way. Teardown removes the sandbox last.
 *
 * Speed (issue 29): every CNI plugin is a process, and the firewall and portmap plugins run
 * iptables a dozen times each, so a bridge set-up from scratch takes hundreds of milliseconds.
 * After the first bridge allocation, the client keeps a few warm namespaces (`warmNamespaces`)
 * on which the part of the chain that does not depend on the allocation (loopback, bridge with
 * its address, firewall) has already run; an allocation takes one, names it after itself (a
 * link to the warm name) and only gets its ports forwarded (one iptables-restore, started ahead:
 * standby-iptables-restore.ts) — no process starts on its path. A warm namespace is new and used once:
 * nothing of an earlier allocation is in it. Each is recorded like an allocation's network, so
 * a sweep removes the ones a dead agent left, and close() removes the idle ones at shutdown.
 * Teardown runs after the allocation is reported stopped. It removes the port forwarding first
 * (one iptables-restore): a set-up whose host ports a teardown still holds waits for that much
 * only, so a stale forwarding rule never shadows the new one. The rest (the DEL chain, which
 * frees the address only after its firewall rules are gone, then the namespace) follows.
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import type { Allocation } from '../../structs/alloc.js';
import type { NetworkResource } from '../../structs/resources.js';
import type { DriverNetworkManager } from '../../drivers/driver.js';
import { bridgeConflist, DEFAULT_ADMIN_CHAIN, loadConflist, type CniConflist } from './cni-conflist.js';
import { addCniNetwork, delCniNetwork, sandboxSubnet, type CniAttachment, type CniPortMapping } from './cni-network.js';
import { aliasNetns, attachNetns, createNetns, deleteNetns, netnsExists, netnsPath } from './net-namespace.js';
import { NetworkError, NetworkErrorCode } from './network-error.js';
import { hostsText, resolvConfText } from './resolv-conf.js';
import { WarmPool } from './warm-pool.js';
import { StandbyIptablesRestore } from './standby-iptables-restore.js';
import { addHostPortForward, enableRouteLocalnet, ensureHostPortChains, flushStaleUdp, hostPortForwardPresent, removeHostPortForward, type HostPortForward } from './host-port-forward.js';

/** The client's network options (Nomad's names), with defaults applied. */
export interface ClientNetworkConfig {
  /** `bridge_network_name` (default "nomad"). */
  bridgeName: string;
  /** `bridge_network_subnet` (default 172.26.64.0/20). */
  bridgeSubnet: string;
  /** `bridge_network_hairpin_mode` (default false). */
  hairpinMode: boolean;
  /** `cni_path`, split on ':' (default /opt/cni/bin, then Debian's /usr/lib/cni). */
  cniPath: string[];
  /** `cni_config_dir` (default /opt/cni/config). */
  cniConfigDir: string;
  /**
   * Bridge namespaces kept warm once the client has run a bridge allocation (default 2; 0
   * disables). Not an agent option (Nomad has none): each holds an address of the subnet.
   */
  warmNamespaces: number;
}

/** The interface the namespace gets on a bridge or CNI network (Nomad's "eth" + index). */
export const ALLOC_IFNAME = 'eth0';

/** An allocation's group network as set up: what tasks join and what the servers are told. */
export interface AllocNetwork {
  mode: string;
  /** The namespace's path (/var/run/netns/<alloc id>). */
  netnsPath: string;
  /** The allocation's address in its namespace ('' in mode none). */
  address: string;
  interfaceName: string;
  /** A resolv.conf written from the `dns` block, for drivers that mount one; absent without it. */
  resolvConf?: string;
  /** A hosts file naming `hostname`, when the network sets one. */
  hostsFile?: string;
  hostname?: string;
  /** The driver sandbox owning the namespace (docker's pause container ID), when a driver made it. */
  sandboxId?: string;
}

/** Finds the network manager of a driver by name (only drivers that must own the namespace have one). */
export type SandboxLookup = (driver: string) => DriverNetworkManager | undefined;

/** What is recorded per allocation (AllocNetwork plus what DEL needs). */
interface NetworkRecord extends AllocNetwork {
  allocId: string;
  /** The CNI container ID the chain ran with: the allocation ID, or the warm namespace's name it came from. */
  containerId?: string;
  /** The warm namespace's own name, dropped once the allocation's name is on it. */
  aliasOf?: string;
  conflist: CniConflist | null;
  portMappings: CniPortMapping[];
  cniResult: Record<string, unknown> | null;
  /**
   * Bridge mode: the host ports forwarded by the client's own rules (the portmap plugin's, see
   * host-port-forward.ts); recorded before they are made. Absent in records of plugin-run portmap.
   */
  portForward?: HostPortForward;
  /** The driver whose sandbox owns the namespace; recorded before it is created (id '' until then). */
  sandbox?: { driver: string; id: string };
  /** false until the set-up finished (a crash before leaves a record for sweep to undo). */
  complete: boolean;
}

/** Whether a group network mode isolates the allocation in a namespace of its own. */
export function isolatedMode(mode: string | undefined): boolean {
  return mode !== undefined && mode !== '' && mode !== 'host';
}

/** The group's network block, if any (Nomad allows one). */
export function groupNetwork(alloc: Allocation): NetworkResource | undefined {
  return alloc.Job?.TaskGroups.find((g) => g.Name === alloc.TaskGroup)?.Networks?.[0];
}

/** The portmap entries of the allocation's ports: host port → `to` (the host port when `to` < 1), TCP and UDP, as Nomad's. */
export function allocPortMappings(alloc: Allocation): CniPortMapping[] {
  const shared = alloc.AllocatedResources?.Shared;
  const pairs: { value: number; to: number }[] = [];
  if (shared?.Ports && shared.Ports.length > 0) for (const p of shared.Ports) pairs.push({ value: p.Value, to: p.To });
  else for (const n of shared?.Networks ?? []) for (const p of [...(n.ReservedPorts ?? []), ...(n.DynamicPorts ?? [])]) pairs.push({ value: p.Value, to: p.To });
  const out: CniPortMapping[] = [];
  for (const { value, to } of pairs) {
    if (value <= 0) continue;
    const containerPort = to > 0 ? to : value;
    out.push({ hostPort: value, containerPort, protocol: 'tcp' }, { hostPort: value, containerPort, protocol: 'udp' });
  }
  return out;
}

/**
 * A refill waits until no set-up is under way and none ended this recently: the plugin
 * processes of a refill would otherwise compete for the CPU with the set-up and with the start
 * of the tasks that follow it (on a 2-core client the difference is hundreds of milliseconds).
 */
const REFILL_QUIET_MS = 250;

/** How many leftover networks a starting agent removes at once. */
const SWEEP_CONCURRENCY = 4;

function iptables(args: string[]): Promise<boolean> {
  return new Promise((resolve) => execFile('iptables', ['-w', ...args], { timeout: 30_000 }, (err) => resolve(!err)));
}

/** Sets up, restores and removes allocations' group networks on this client. */
export class AllocNetworkConfigurator {
  private forwardingReady: Promise<void> | null = null;
  private hostPortChainsReady: Promise<void> | null = null;
  /** Warm bridge namespaces (records of allocId `cvwarm-…`, never complete). */
  private readonly warm: WarmPool<NetworkRecord>;
  /** An iptables-restore started ahead: the port rules' one process, already running when a set-up or teardown needs it. */
  private readonly standby: StandbyIptablesRestore;
  private readonly restoreRules = (text: string): Promise<void> => this.standby.apply(text);
  /** Teardowns under way, by allocation, with the host ports their portmap rules still hold. */
  private readonly releasing = new Map<string, { ports: Promise<ReadonlySet<number>>; free: Promise<void> }>();
  /** Set-ups under way, and when the last one ended (performance.now()): what a refill waits for. */
  private settingUp = 0;
  private lastSetupEnd = 0;

  constructor(
    private readonly cfg: ClientNetworkConfig,
    /** Where records, leases and generated files live (`<data_dir>/network`). */
    private readonly stateDir: string,
    /** The drivers that create the namespace themselves (docker), by name. */
    private readonly sandboxes: SandboxLookup = () => undefined,
  ) {
    this.warm = new WarmPool({ size: cfg.warmNamespaces, create: () => this.createWarm(), destroy: (r) => this.undo(r), beforeCreate: () => this.quiet() });
    this.standby = new StandbyIptablesRestore({ beforeSpawn: () => this.quiet() });
  }

  /** The driver of the group's tasks that must own the namespace, if any (Nomad: one such driver per group). */
  private sandboxDriver(alloc: Allocation): { driver: string; manager: DriverNetworkManager } | null {
    const tasks = alloc.Job?.TaskGroups.find((g) => g.Name === alloc.TaskGroup)?.Tasks ?? [];
    for (const t of tasks) {
      const manager = this.sandboxes(t.Driver);
      if (manager) return { driver: t.Driver, manager };
    }
    return null;
  }

  /** Whether the recorded sandbox (if any) still runs; a record without one needs nothing. */
  private async sandboxAlive(rec: NetworkRecord): Promise<boolean> {
    if (!rec.sandbox) return true;
    const manager = this.sandboxes(rec.sandbox.driver);
    if (!manager || !rec.sandbox.id) return false;
    return manager.sandboxRunning(rec.allocId, rec.sandbox.id).catch(() => false);
  }

  private recordPath(allocId: string): string {
    return join(this.stateDir, `${allocId}.json`);
  }

  private filesDir(allocId: string): string {
    return join(this.stateDir, allocId);
  }

  /**
   * Writes the record (atomically: a temporary file renamed). Synchronously, as readRecord: a
   * few kilobytes take well under a millisecond, where the thread pool's mkdir, open, write,
   * close and rename are five round trips between threads — milliseconds each on a loaded 2-core
   * client, on every set-up's path (issue 29).
   */
  private writeRecord(r: NetworkRecord): void {
    mkdirSync(this.stateDir, { recursive: true, mode: 0o700 });
    const tmp = `${this.recordPath(r.allocId)}.tmp`;
    writeFileSync(tmp, JSON.stringify(r), { mode: 0o600 });
    renameSync(tmp, this.recordPath(r.allocId));
  }

  private readRecord(allocId: string): NetworkRecord | null {
    try {
      return JSON.parse(readFileSync(this.recordPath(allocId), 'utf8')) as NetworkRecord;
    } catch {
      return null;
    }
  }

  /** The conflist for a mode; throws NetworkError(Config) for a mode the client cannot provide. */
  private async conflistFor(mode: string, allocId: string): Promise<CniConflist | null> {
    if (mode === 'none') return null;
    if (mode === 'bridge') {
      const nomad = bridgeConflist({
        bridgeName: this.cfg.bridgeName,
        subnet: this.cfg.bridgeSubnet,
        hairpinMode: this.cfg.hairpinMode,
        adminChain: DEFAULT_ADMIN_CHAIN,
        ipamDataDir: join(this.stateDir, 'ipam'),
      });
      // Nomad's list without portmap: the client makes portmap's rules itself (forwardPorts).
      return { ...nomad, plugins: nomad.plugins.filter((p) => p['type'] !== 'portmap') };
    }
    if (mode.startsWith('cni/')) {
      const name = mode.slice('cni/'.length);
      let list: CniConflist | undefined;
      try {
        list = await loadConflist(this.cfg.cniConfigDir, name);
      } catch (err) {
        throw new NetworkError(NetworkErrorCode.Config, { mode, alloc: allocId, reason: (err as Error).message }, { cause: err });
      }
      if (!list) throw new NetworkError(NetworkErrorCode.Config, { mode, alloc: allocId, reason: `no CNI network "${name}" in cni_config_dir ${this.cfg.cniConfigDir}` });
      return list;
    }
    throw new NetworkError(NetworkErrorCode.Config, { mode, alloc: allocId, reason: 'unknown network mode (want "host", "bridge", "none" or "cni/<name>")' });
  }

  /**
   * Nomad's forwarding rule for the bridge (`-o <bridge> -d <subnet> -j ACCEPT` in NOMAD-ADMIN),
   * and a guard Nomad lacks: packets from the bridge to 127.0.0.0/8 are dropped, so a task that
   * routes loopback addresses through its gateway (portmap turns route_localnet on for the
   * bridge) still cannot reach services bound to the host's loopback. Once per process.
   */
  private ensureForwarding(): Promise<void> {
    this.forwardingReady ??= (async () => {
      await iptables(['-N', DEFAULT_ADMIN_CHAIN]);
      const admin = [DEFAULT_ADMIN_CHAIN, '-o', this.cfg.bridgeName, '-d', this.cfg.bridgeSubnet, '-j', 'ACCEPT'];
      if (!(await iptables(['-C', ...admin]))) await iptables(['-A', ...admin]);
      // New connections only: replies to the host's own connections through a port mapped on
      // 127.0.0.1 come back from the bridge to a loopback address too.
      const guard = ['INPUT', '-i', this.cfg.bridgeName, '-d', '127.0.0.0/8', '-m', 'conntrack', '!', '--ctstate', 'RELATED,ESTABLISHED', '-j', 'DROP'];
      if (!(await iptables(['-C', ...guard]))) await iptables(['-I', ...guard]);
    })();
    return this.forwardingReady;
  }

  /**
   * portmap's shared chains (CNI-HOSTPORT-DNAT, -SETMARK, -MASQ and their entry rules), made
   * where missing once per process; a failure is retried by the next call.
   */
  private ensureHostPortChains(): Promise<void> {
    this.hostPortChainsReady ??= ensureHostPortChains().catch((err: unknown) => {
      this.hostPortChainsReady = null;
      throw err;
    });
    return this.hostPortChainsReady;
  }

  /** What forwarding the allocation's ports needs, on the address and subnet its namespace got. */
  private portForwardOf(rec: NetworkRecord, mappings: CniPortMapping[]): HostPortForward {
    return { network: rec.conflist!.name, containerId: rec.containerId ?? rec.allocId, address: rec.address, subnet: sandboxSubnet(rec.cniResult, rec.interfaceName || ALLOC_IFNAME), mappings };
  }

  /** Forwards the recorded ports (portmap's rules, one iptables-restore); UDP flows seen before are dropped after. */
  private async forwardPorts(f: HostPortForward): Promise<void> {
    if (f.mappings.length === 0) return;
    enableRouteLocalnet(this.cfg.bridgeName);
    await this.ensureHostPortChains();
    await addHostPortForward(f, this.restoreRules);
    void flushStaleUdp(f);
  }

  /**
   * Creates the allocation's namespace and network; null for host mode. Idempotent: a network
   * already complete for this allocation is returned as it is.
   */
  async setup(alloc: Allocation): Promise<AllocNetwork | null> {
    const net = groupNetwork(alloc);
    const mode = net?.Mode || 'host';
    if (!isolatedMode(mode)) return null;
    // The ID names the namespace and the record file: never a path or an option.
    if (!/^[A-Za-z0-9][A-Za-z0-9-]{0,63}$/.test(alloc.ID)) {
      throw new NetworkError(NetworkErrorCode.Config, { mode, alloc: alloc.ID, reason: 'the allocation ID cannot name a network namespace' });
    }
    const prior = this.readRecord(alloc.ID);
    if (prior?.complete && (await netnsExists(alloc.ID)) && (await this.sandboxAlive(prior))) return publicView(prior);
    if (prior) await this.undo(prior);
    this.settingUp++;
    try {
      return await this.setupMode(alloc, net!, mode);
    } finally {
      this.settingUp--;
      this.lastSetupEnd = performance.now();
    }
  }

  /** Resolves once no set-up is under way and none ended in the last REFILL_QUIET_MS. */
  private async quiet(): Promise<void> {
    for (;;) {
      const wait = this.settingUp > 0 ? REFILL_QUIET_MS : this.lastSetupEnd + REFILL_QUIET_MS - performance.now();
      if (wait <= 0) return;
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }

  private async setupMode(alloc: Allocation, net: NetworkResource, mode: string): Promise<AllocNetwork> {
    // A namespace a driver's sandbox owns (docker's pause container) cannot come from the pool.
    if (mode === 'bridge' && !this.sandboxDriver(alloc)) {
      const warm = this.warm.take();
      try {
        if (warm) {
          try {
            return await this.setupFromWarm(alloc, net, warm);
          } catch {
            // Undone already; a warm namespace gone bad (removed behind the client's back) must
            // not fail the allocation: the set-up from scratch reports its own error, if any.
          }
        }
        return await this.setupFresh(alloc, net, mode);
      } finally {
        // Starts the pool on a client's first bridge allocation; each create waits for quiet(),
        // and so does the standby iptables-restore.
        this.warm.fill();
        this.standby.refill();
      }
    }
    return this.setupFresh(alloc, net, mode);
  }

  private async setupFresh(alloc: Allocation, net: NetworkResource, mode: string): Promise<AllocNetwork> {
    const conflist = await this.conflistFor(mode, alloc.ID);
    const sandbox = this.sandboxDriver(alloc);
    const rec: NetworkRecord = {
      allocId: alloc.ID,
      mode,
      netnsPath: netnsPath(alloc.ID),
      address: '',
      interfaceName: conflist ? ALLOC_IFNAME : '',
      conflist,
      portMappings: conflist ? allocPortMappings(alloc) : [],
      cniResult: null,
      ...(sandbox ? { sandbox: { driver: sandbox.driver, id: '' } } : {}),
      complete: false,
    };
    this.writeRecord(rec);
    try {
      const ready = [mode === 'bridge' ? this.ensureForwarding() : undefined, this.portsReleased(rec.portMappings)];
      if (sandbox) {
        await Promise.all(ready);
        const made = await sandbox.manager.createNetwork(alloc.ID, net?.Hostname ? { hostname: net.Hostname } : {});
        rec.sandbox = { driver: sandbox.driver, id: made.id };
        this.writeRecord(rec);
        await attachNetns(alloc.ID, made.pid, conflist === null);
      } else {
        await Promise.all([...ready, createNetns(alloc.ID, conflist === null)]);
      }
      if (conflist) {
        const added = await addCniNetwork(conflist, this.attachment(rec));
        rec.address = added.address;
        rec.cniResult = added.result;
      }
      if (mode === 'bridge' && rec.portMappings.length > 0) {
        rec.portForward = this.portForwardOf(rec, rec.portMappings);
        this.writeRecord(rec);
        await this.forwardPorts(rec.portForward);
      }
      await this.writeNameFiles(rec, net);
      rec.complete = true;
      this.writeRecord(rec);
    } catch (err) {
      return this.setupFailed(rec, err);
    }
    return publicView(rec);
  }

  /**
   * The allocation takes a warm namespace: recorded as the allocation's (before the warm record
   * goes, so a crash leaves one record or both, never none), named after the allocation (a link
   * to the warm name, no process: aliasNetns) while its ports are forwarded to the address the
   * warm namespace already has (the standby iptables-restore). The warm name stays while the
   * allocation runs; teardown removes the link, then the namespace by that name.
   */
  private async setupFromWarm(alloc: Allocation, net: NetworkResource, warm: NetworkRecord): Promise<AllocNetwork> {
    const mappings = allocPortMappings(alloc);
    const rec: NetworkRecord = {
      ...warm,
      allocId: alloc.ID,
      containerId: warm.allocId,
      aliasOf: warm.allocId,
      // The warm path until the allocation's name is on the namespace (what a DEL enters).
      netnsPath: warm.netnsPath,
      portMappings: mappings,
      complete: false,
    };
    if (mappings.length > 0) rec.portForward = this.portForwardOf(rec, mappings);
    this.writeRecord(rec);
    // Off the main thread, beside the rules: unlinking a file written a moment ago takes ext4
    // milliseconds. Gone before the allocation's record is complete — a warm record left beside
    // a complete one would have a starting agent's sweep remove the allocation's namespace.
    const warmRecordGone = rm(this.recordPath(warm.allocId), { force: true });
    try {
      await this.portsReleased(rec.portMappings);
      // Naming the namespace and forwarding its ports are independent. Both settle before
      // anything is undone: a removal must not overtake the addition it undoes.
      const [named, forwarded, gone] = await Promise.allSettled([aliasNetns(warm.allocId, alloc.ID), rec.portForward ? this.forwardPorts(rec.portForward) : undefined, warmRecordGone]);
      if (named.status === 'rejected') throw named.reason;
      if (forwarded.status === 'rejected') throw forwarded.reason;
      if (gone.status === 'rejected') throw gone.reason;
      rec.netnsPath = netnsPath(alloc.ID);
      rec.cniResult = withSandbox(warm.cniResult, warm.netnsPath, rec.netnsPath);
      await this.writeNameFiles(rec, net);
      rec.complete = true;
      this.writeRecord(rec);
    } catch (err) {
      return this.setupFailed(rec, err);
    }
    return publicView(rec);
  }

  /** Undoes a set-up that failed part-way and throws its error as a NetworkError. */
  private async setupFailed(rec: NetworkRecord, err: unknown): Promise<never> {
    await this.undo(rec).catch(() => undefined);
    if (err instanceof NetworkError) throw err;
    throw new NetworkError(NetworkErrorCode.Setup, { mode: rec.mode, alloc: rec.allocId, reason: (err as Error).message }, { cause: err });
  }

  /** A warm bridge namespace: its own name and record, the chain up to the plugin that needs the allocation's ports. */
  private async createWarm(): Promise<NetworkRecord> {
    const id = `cvwarm-${randomBytes(8).toString('hex')}`;
    const conflist = (await this.conflistFor('bridge', id))!;
    const rec: NetworkRecord = { allocId: id, mode: 'bridge', netnsPath: netnsPath(id), address: '', interfaceName: ALLOC_IFNAME, conflist, portMappings: [], cniResult: null, complete: false };
    this.writeRecord(rec);
    try {
      // The shared port chains too: the allocation that takes this namespace then only adds its own.
      await Promise.all([this.ensureForwarding(), this.ensureHostPortChains(), createNetns(id, false)]);
      const added = await addCniNetwork(conflist, this.attachment(rec));
      rec.address = added.address;
      rec.cniResult = added.result;
      this.writeRecord(rec);
    } catch (err) {
      await this.undo(rec).catch(() => undefined);
      throw err;
    }
    return rec;
  }

  /** Waits for the teardowns still holding any of these host ports (their DNAT rules would match first). */
  private async portsReleased(mappings: CniPortMapping[]): Promise<void> {
    const mine = new Set(mappings.map((m) => m.hostPort));
    // A teardown that has only just started may not know its ports yet (its record is being read).
    await Promise.all(
      [...this.releasing.values()].map(async (r) => {
        if ([...(await r.ports)].some((p) => mine.has(p))) await r.free;
      }),
    );
  }

  private async writeNameFiles(rec: NetworkRecord, net: NetworkResource): Promise<void> {
    const dir = this.filesDir(rec.allocId);
    if (net.DNS) {
      await mkdir(dir, { recursive: true, mode: 0o755 });
      rec.resolvConf = join(dir, 'resolv.conf');
      await writeFile(rec.resolvConf, resolvConfText(net.DNS), { mode: 0o644 });
    }
    if (net.Hostname) {
      await mkdir(dir, { recursive: true, mode: 0o755 });
      rec.hostname = net.Hostname;
      rec.hostsFile = join(dir, 'hosts');
      await writeFile(rec.hostsFile, hostsText(net.Hostname, rec.address), { mode: 0o644 });
    }
  }

  private attachment(rec: NetworkRecord): CniAttachment {
    return { containerId: rec.containerId ?? rec.allocId, netnsPath: rec.netnsPath, ifName: rec.interfaceName || ALLOC_IFNAME, cniPath: this.cfg.cniPath, portMappings: rec.portMappings };
  }

  /**
   * The network of an allocation restored after an agent restart, when its namespace is still
   * there; null when nothing was recorded or the namespace is gone (the caller sets up again).
   */
  async restore(allocId: string): Promise<AllocNetwork | null> {
    const rec = this.readRecord(allocId);
    if (!rec?.complete || !(await netnsExists(allocId)) || !(await this.sandboxAlive(rec))) return null;
    // Rules live in the kernel and survive the agent; made again should they be gone (an iptables flush).
    if (rec.portForward && !(await hostPortForwardPresent(rec.portForward).catch(() => false))) {
      try {
        await removeHostPortForward(rec.portForward, this.restoreRules);
        await this.forwardPorts(rec.portForward);
      } catch {
        return null;
      }
    }
    return publicView(rec);
  }

  /**
   * Removes the allocation's network: its port rules (then `onPortsFree` is called: a set-up
   * on those host ports may go on), CNI DEL, the namespace, its files and record. Idempotent.
   */
  async teardown(allocId: string, onPortsFree?: () => void): Promise<void> {
    let known = (_: ReadonlySet<number>): void => undefined;
    const ports = new Promise<ReadonlySet<number>>((resolve) => (known = resolve));
    let portsFree = (): void => undefined;
    const free = new Promise<void>((resolve) => (portsFree = resolve)).then(() => onPortsFree?.());
    const done = (async () => {
      try {
        const rec = this.readRecord(allocId);
        known(new Set(rec?.portMappings.map((m) => m.hostPort)));
        if (!rec) return;
        if (rec.portMappings.length === 0) portsFree();
        // The client's own port rules first: what a set-up on one of those ports waits for (a
        // failure here is retried by undo). A plugin's (cni/<name> portmap) go with the DEL chain.
        if (rec.portForward && (await removeHostPortForward(rec.portForward, this.restoreRules).then(() => true, () => false))) {
          portsFree();
          await this.undo(rec, { portsRemoved: true });
        } else {
          await this.undo(rec);
        }
      } finally {
        known(new Set());
        portsFree();
      }
    })();
    const entry = { ports, free };
    this.releasing.set(allocId, entry);
    try {
      await done;
    } finally {
      if (this.releasing.get(allocId) === entry) this.releasing.delete(allocId);
    }
  }

  /** Resolves once the warm pool's refill under way (if any) has finished: how many warm namespaces are ready. */
  async warmSettled(): Promise<number> {
    await Promise.all([this.warm.settled(), this.standby.settled()]);
    return this.warm.ready;
  }

  /** Stops keeping namespaces warm and removes the idle ones, and ends the standby iptables-restore (agent shutdown). */
  async close(): Promise<void> {
    await Promise.all([this.warm.close(), this.standby.close()]);
  }

  private async undo(rec: NetworkRecord, opts: { portsRemoved?: boolean } = {}): Promise<void> {
    let first: unknown = null;
    // Where portmap's DEL would be, the chain run in reverse: first.
    if (rec.portForward && !opts.portsRemoved) await removeHostPortForward(rec.portForward, this.restoreRules).catch((err: unknown) => (first ??= err));
    if (rec.conflist) {
      // DEL needs the namespace path even when the namespace is gone (plugins then skip it).
      await delCniNetwork(rec.conflist, this.attachment(rec), rec.cniResult).catch((err: unknown) => (first ??= err));
    }
    // The allocation's name first: on a warm namespace it is a link to the warm name (aliasNetns).
    await deleteNetns(rec.allocId).catch((err: unknown) => (first ??= err));
    if (rec.aliasOf) await deleteNetns(rec.aliasOf).catch((err: unknown) => (first ??= err));
    if (rec.sandbox) {
      // Last: the sandbox held the namespace until the CNI DEL was done with it.
      const manager = this.sandboxes(rec.sandbox.driver);
      if (!manager) first ??= new Error(`the ${rec.sandbox.driver} driver that owns the namespace is not available`);
      else await manager.destroyNetwork(rec.allocId, rec.sandbox.id || undefined).catch((err: unknown) => (first ??= err));
    }
    await rm(this.filesDir(rec.allocId), { recursive: true, force: true });
    if (first) {
      throw new NetworkError(NetworkErrorCode.Setup, { mode: rec.mode, alloc: rec.allocId, reason: `teardown: ${(first as Error).message}` }, { cause: first });
    }
    // Asynchronously: off every path, and an unlink can take ext4 milliseconds.
    await rm(this.recordPath(rec.allocId), { force: true });
  }

  /**
   * Removes the networks recorded for allocations not in `keep` (allocations a dead agent left
   * behind). Returns the IDs removed; one that fails is left recorded for the next start.
   */
  async sweep(keep: ReadonlySet<string>): Promise<string[]> {
    let names: string[];
    try {
      names = await readdir(this.stateDir);
    } catch {
      return [];
    }
    const removed: string[] = [];
    // A few at a time: each DEL chain is a few hundred milliseconds of plugin processes, and a
    // node that lost many allocations must not fork hundreds of them at once.
    const ids = names.filter((f) => f.endsWith('.json')).map((f) => f.slice(0, -'.json'.length)).filter((id) => !keep.has(id));
    const worker = async (): Promise<void> => {
      for (let id = ids.shift(); id !== undefined; id = ids.shift()) {
        const rec = this.readRecord(id);
        if (!rec) continue;
        try {
          await this.undo(rec);
          removed.push(id);
        } catch {
          // left for the next start
        }
      }
    };
    await Promise.all(Array.from({ length: SWEEP_CONCURRENCY }, worker));
    return removed.sort();
  }
}

/** The CNI result with the warm namespace's path replaced by the allocation's (the same namespace). */
function withSandbox(result: Record<string, unknown> | null, from: string, to: string): Record<string, unknown> | null {
  const ifaces = result?.['interfaces'] as { sandbox?: string }[] | undefined;
  if (!result || !ifaces) return result;
  return { ...result, interfaces: ifaces.map((i) => (i.sandbox === from ? { ...i, sandbox: to } : i)) };
}

function publicView(r: NetworkRecord): AllocNetwork {
  return {
    mode: r.mode,
    netnsPath: r.netnsPath,
    address: r.address,
    interfaceName: r.interfaceName,
    ...(r.resolvConf ? { resolvConf: r.resolvConf } : {}),
    ...(r.hostsFile ? { hostsFile: r.hostsFile } : {}),
    ...(r.hostname ? { hostname: r.hostname } : {}),
    ...(r.sandbox?.id ? { sandboxId: r.sandbox.id } : {}),
  };
}

/** The client network options from Nomad's defaults and the agent's settings. */
export function clientNetworkConfig(o: Partial<ClientNetworkConfig> = {}): ClientNetworkConfig {
  return {
    bridgeName: o.bridgeName || 'nomad',
    bridgeSubnet: o.bridgeSubnet || '172.26.64.0/20',
    hairpinMode: o.hairpinMode ?? false,
    cniPath: o.cniPath && o.cniPath.length > 0 ? o.cniPath : ['/opt/cni/bin', '/usr/lib/cni'],
    cniConfigDir: o.cniConfigDir || '/opt/cni/config',
    warmNamespaces: o.warmNamespaces ?? 2,
  };
}
