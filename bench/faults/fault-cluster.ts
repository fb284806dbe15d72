/**
 * The processes of a fault run on loopback: one etcd member listening on one client port per
 * server (so one server can be cut from etcd with the firewall without touching the others),
 * three Caravan servers and two client agents, and the faults done to them — kill -9 and restart
 * on the same data dir and port, SIGSTOP/SIGCONT, and an iptables DROP of one server's etcd port.
 * An agent that exits without being told to is a crash, counted with the end of its output.
 */
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EtcdCluster } from '../../test/helpers/etcd-process.js';
import { startAgent, type AgentProcess } from '../../test/integration/helpers/agent-process.js';

export interface FaultClusterOptions {
  /** Lease TTL of the servers (seconds). */
  leaseTtlSeconds: number;
  /** raft_snapshot_threshold: small, so snapshots and compactions happen during the faults. */
  snapshotThreshold: number;
  /** Log level of the agents. */
  logLevel?: string;
  /** Client agents (default 2). */
  clients?: number;
}

/** One agent slot: restarted on the same data dir and port. */
export interface AgentSlot {
  name: string;
  role: 'server' | 'client';
  agent: AgentProcess | null;
  dataDir: string;
  port: number;
  args: string[];
  /** SIGSTOPped now. */
  paused: boolean;
  /** Set before a kill we make, so its exit is not a crash. */
  expectExit: boolean;
}

export interface Crash {
  name: string;
  code: number | null;
  signal: string | null;
  output: string;
}

export class FaultCluster {
  readonly servers: AgentSlot[] = [];
  readonly clients: AgentSlot[] = [];
  readonly crashes: Crash[] = [];
  /** Rules this run added (removed by heal and stop). */
  private readonly dropped = new Set<number>();
  private etcdUp = true;

  private constructor(
    readonly etcd: EtcdCluster,
    private readonly dir: string,
  ) {}

  static async start(o: FaultClusterOptions): Promise<FaultCluster> {
    const etcd = await EtcdCluster.start(1, undefined, { extraClientPorts: 2 });
    const c = new FaultCluster(etcd, await mkdtemp(join(tmpdir(), 'caravan-faults-')));
    try {
      const urls = etcd.clientUrls(0);
      for (let i = 0; i < 3; i++) {
        const config = join(c.dir, `s${i + 1}.hcl`);
        await writeFile(
          config,
          `server {\n  raft_snapshot_threshold = ${o.snapshotThreshold}\n  etcd {\n    endpoints = ["${urls[i]}"]\n    prefix = "/faults/"\n    lease_ttl = "${o.leaseTtlSeconds}s"\n  }\n}\n`,
        );
        const slot: AgentSlot = {
          name: `s${i + 1}`,
          role: 'server',
          agent: null,
          dataDir: await mkdtemp(join(tmpdir(), 'caravan-faults-s-')),
          port: 0,
          args: ['-node', `s${i + 1}`, '-config', config, '-log-level', o.logLevel ?? 'warn'],
          paused: false,
          expectExit: false,
        };
        c.servers.push(slot);
        await c.startSlot(slot, ['-server'], false);
      }
      const servers = c.servers.map((s) => `127.0.0.1:${s.port}`).join(',');
      for (let i = 0; i < (o.clients ?? 2); i++) {
        const slot: AgentSlot = {
          name: `c${i + 1}`,
          role: 'client',
          agent: null,
          // Short: the task supervisor's unix socket path must stay under 107 bytes.
          dataDir: await mkdtemp('/tmp/cv-'),
          port: 0,
          args: ['-servers', servers, '-node', `c${i + 1}`, '-log-level', o.logLevel ?? 'warn'],
          paused: false,
          expectExit: false,
        };
        c.clients.push(slot);
        await c.startSlot(slot, ['-client'], true);
      }
    } catch (err) {
      await c.stop();
      throw err;
    }
    return c;
  }

  /** The addresses of the servers now running and not paused. */
  liveServers(): AgentSlot[] {
    return this.servers.filter((s) => s.agent && !s.paused);
  }

  address(slot: AgentSlot): string {
    return `http://127.0.0.1:${slot.port}`;
  }

  async kill(slot: AgentSlot): Promise<void> {
    if (!slot.agent) return;
    slot.expectExit = true;
    if (slot.paused) slot.agent.proc.kill('SIGCONT');
    slot.paused = false;
    await slot.agent.kill();
    slot.agent = null;
  }

  async restart(slot: AgentSlot): Promise<void> {
    if (slot.agent) return;
    await this.startSlot(slot, slot.role === 'server' ? ['-server'] : ['-client'], slot.role === 'client');
  }

  pause(slot: AgentSlot): void {
    if (!slot.agent || slot.paused) return;
    slot.agent.proc.kill('SIGSTOP');
    slot.paused = true;
  }

  resume(slot: AgentSlot): void {
    if (!slot.agent || !slot.paused) return;
    slot.agent.proc.kill('SIGCONT');
    slot.paused = false;
  }

  async killEtcd(): Promise<void> {
    this.etcdUp = false;
    await this.etcd.stopMember(0, true);
  }

  /** Starts etcd again on its data dir; resolves once it answers its health check. */
  async restartEtcd(): Promise<void> {
    await this.etcd.startMember(0, true);
    this.etcdUp = true;
  }

  get etcdRunning(): boolean {
    return this.etcdUp;
  }

  /** Whether this machine lets us cut loopback traffic with iptables. */
  static firewallAvailable(): boolean {
    try {
      execFileSync('iptables', ['-w', '-L', 'OUTPUT', '-n'], { stdio: 'ignore' });
      return true;
    } catch {
      return false;
    }
  }

  /** Drops everything on server i's own etcd client port, both ways (its connections hang as on a partition). */
  cutFromEtcd(i: number): void {
    const port = Number(new URL(this.etcd.clientUrls(0)[i]!).port);
    for (const dir of ['--dport', '--sport']) execFileSync('iptables', ['-w', '-I', 'OUTPUT', '-o', 'lo', '-p', 'tcp', dir, String(port), '-j', 'DROP']);
    this.dropped.add(port);
  }

  healAll(): void {
    for (const port of this.dropped) {
      for (const dir of ['--dport', '--sport']) {
        try {
          execFileSync('iptables', ['-w', '-D', 'OUTPUT', '-o', 'lo', '-p', 'tcp', dir, String(port), '-j', 'DROP'], { stdio: 'ignore' });
        } catch {
          // already gone
        }
      }
    }
    this.dropped.clear();
  }

  async stop(): Promise<void> {
    this.healAll();
    for (const slot of [...this.clients, ...this.servers]) {
      await this.kill(slot).catch(() => undefined);
      await rm(slot.dataDir, { recursive: true, force: true }).catch(() => undefined);
    }
    // Tasks outlive their agent by design: the client data dirs' processes go with them.
    const { killDataDirProcesses } = await import('../../test/integration/helpers/processes.js');
    for (const slot of this.clients) await killDataDirProcesses(slot.dataDir).catch(() => undefined);
    await this.etcd.stop();
    await rm(this.dir, { recursive: true, force: true });
  }

  private async startSlot(slot: AgentSlot, roleArgs: string[], rawExec: boolean): Promise<void> {
    slot.expectExit = false;
    const agent = await startAgent({
      roleArgs,
      rawExec,
      dataDir: slot.dataDir,
      ...(slot.port ? { port: slot.port } : {}),
      extraArgs: slot.args,
      readyTimeoutMs: 60_000,
    });
    slot.port = agent.port;
    slot.agent = agent;
    agent.proc.once('exit', (code, signal) => {
      if (slot.expectExit || slot.agent !== agent) return;
      const o = agent.output();
      this.crashes.push({ name: slot.name, code, signal, output: (o.stdout + o.stderr).slice(-4000) });
      slot.agent = null;
    });
  }
}
