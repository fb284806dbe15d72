/**
 * Starts a real etcd (Debian's 3.4 `etcd` binary on PATH) for tests: one member or a cluster
 * of several, on free loopback ports in a temporary dir. Members are stopped by pid and can be
 * started again on the same data dir and ports (etcd down, then back).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:https';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A free loopback port (the OS picks it). */
export function freeLoopbackPort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolvePort(port));
    });
  });
}

interface Member {
  name: string;
  clientPort: number;
  peerPort: number;
  dataDir: string;
  /** More client ports beside clientPort (a fault run gives each server its own, to cut one from etcd). */
  extraClientPorts: number[];
  proc: ChildProcess | null;
  output: string;
}

/** Client TLS of the members (PEM files): their certificate, and the CA clients must be signed by. */
export interface EtcdTls {
  certFile: string;
  keyFile: string;
  caFile: string;
  /** A client certificate the health check presents. */
  clientCertFile: string;
  clientKeyFile: string;
}

/** A running etcd cluster; `endpoints` are its client URLs. */
export class EtcdCluster {
  readonly endpoints: string[];
  private constructor(
    private readonly dir: string,
    private readonly members: Member[],
    private readonly tls: EtcdTls | undefined,
  ) {
    this.endpoints = members.map((m) => `${tls ? 'https' : 'http'}://127.0.0.1:${m.clientPort}`);
  }

  /**
   * Starts `size` members (1 or 3 in the tests) and waits until the cluster serves requests.
   * With `tls`, clients must speak TLS and present a certificate signed by its CA.
   */
  static async start(size = 1, tls?: EtcdTls, opts: { extraClientPorts?: number } = {}): Promise<EtcdCluster> {
    const dir = mkdtempSync(join(tmpdir(), 'caravan-etcd-'));
    const members: Member[] = [];
    for (let i = 0; i < size; i++) {
      const extraClientPorts: number[] = [];
      for (let k = 0; k < (opts.extraClientPorts ?? 0); k++) extraClientPorts.push(await freeLoopbackPort());
      members.push({ name: `m${i}`, clientPort: await freeLoopbackPort(), peerPort: await freeLoopbackPort(), dataDir: join(dir, `m${i}`), extraClientPorts, proc: null, output: '' });
    }
    const cluster = new EtcdCluster(dir, members, tls);
    try {
      for (let i = 0; i < size; i++) cluster.spawnMember(i);
      await Promise.all(members.map((_, i) => cluster.waitHealthy(i)));
    } catch (err) {
      await cluster.stop();
      throw err;
    }
    return cluster;
  }

  /** Client URL of member i. */
  endpoint(i: number): string {
    return this.endpoints[i]!;
  }

  /** Every client URL member i listens on: its endpoint, then its extra client ports. */
  clientUrls(i: number): string[] {
    const m = this.members[i]!;
    const scheme = this.tls ? 'https' : 'http';
    return [this.endpoints[i]!, ...m.extraClientPorts.map((p) => `${scheme}://127.0.0.1:${p}`)];
  }

  /** Where member i keeps its data (a fault run measures its size). */
  dataDir(i: number): string {
    return this.members[i]!.dataDir;
  }

  pid(i: number): number | undefined {
    return this.members[i]!.proc?.pid;
  }

  /** Stops member i (SIGKILL when `kill`, else SIGTERM) and waits for it to exit. */
  async stopMember(i: number, kill = false): Promise<void> {
    const m = this.members[i]!;
    const proc = m.proc;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) {
      m.proc = null;
      return;
    }
    const exited = new Promise<void>((r) => proc.once('exit', () => r()));
    proc.kill(kill ? 'SIGKILL' : 'SIGTERM');
    const timer = setTimeout(() => proc.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(timer);
    m.proc = null;
  }

  /** Starts member i again on its data dir and ports; resolves once it is healthy. */
  async startMember(i: number, waitHealthy = true): Promise<void> {
    if (this.members[i]!.proc) return;
    this.spawnMember(i);
    if (waitHealthy) await this.waitHealthy(i);
  }

  /** Kills every member (the data goes too, so nothing needs a clean shutdown) and removes the data dirs. */
  async stop(): Promise<void> {
    await Promise.all(this.members.map((_, i) => this.stopMember(i, true)));
    rmSync(this.dir, { recursive: true, force: true });
  }

  /** What member i printed (for failure messages). */
  output(i: number): string {
    return this.members[i]!.output;
  }

  private spawnMember(i: number): void {
    const m = this.members[i]!;
    const peers = this.members.map((p) => `${p.name}=http://127.0.0.1:${p.peerPort}`).join(',');
    const args = [
      '--name', m.name,
      '--data-dir', m.dataDir,
      '--listen-client-urls', this.clientUrls(i).join(','),
      '--advertise-client-urls', this.endpoints[i]!,
      ...(this.tls ? ['--cert-file', this.tls.certFile, '--key-file', this.tls.keyFile, '--trusted-ca-file', this.tls.caFile, '--client-cert-auth'] : []),
      '--listen-peer-urls', `http://127.0.0.1:${m.peerPort}`,
      '--initial-advertise-peer-urls', `http://127.0.0.1:${m.peerPort}`,
      '--initial-cluster', peers,
      '--initial-cluster-state', 'new',
      '--initial-cluster-token', `caravan-test-${process.pid}`,
      // Fast elections keep the tests' etcd failovers to a fraction of a second.
      '--heartbeat-interval', '50',
      '--election-timeout', '500',
      '--log-level', 'warn',
    ];
    const proc = spawn('etcd', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    m.output = '';
    const keep = (d: Buffer): void => {
      m.output = (m.output + d.toString()).slice(-20_000);
    };
    proc.stdout!.on('data', keep);
    proc.stderr!.on('data', keep);
    proc.on('error', (err) => keep(Buffer.from(`spawn failed: ${err.message}\n`)));
    m.proc = proc;
  }

  /** GET over http, or https with the cluster's CA and client certificate. */
  private async get(url: string): Promise<string> {
    if (!this.tls) return (await fetch(url)).text();
    const tls = this.tls;
    return new Promise((resolveBody, reject) => {
      const req = request(url, { ca: readFileSync(tls.caFile), cert: readFileSync(tls.clientCertFile), key: readFileSync(tls.clientKeyFile) }, (res) => {
        let body = '';
        res.setEncoding('utf8').on('data', (d: string) => (body += d));
        res.on('end', () => resolveBody(body));
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end();
    });
  }

  private async waitHealthy(i: number, timeoutMs = 20_000): Promise<void> {
    const m = this.members[i]!;
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (!m.proc || m.proc.exitCode !== null) throw new Error(`etcd member ${m.name} exited:\n${m.output}`);
      try {
        const body = JSON.parse(await this.get(`${this.endpoints[i]!}/health`)) as { health?: string };
        if (body.health === 'true') return;
      } catch {
        // not listening yet
      }
      if (Date.now() > deadline) throw new Error(`etcd member ${m.name} not healthy after ${timeoutMs} ms:\n${m.output}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}
