/**
 * Failover benchmark (issue 9: median ≤ 3 s): a real etcd (one member on loopback), three
 * Caravan servers on it and a client agent with raw_exec. Each round kills the leader with
 * SIGKILL and measures the time until a new job is accepted (by whichever server answers 200)
 * and placed on the client (an allocation exists); then the killed server is restarted on its
 * data dir and the next round waits until it follows again. Prints the median and p90 beside
 * the goal and writes bench/results/failover.json.
 *
 * Usage: node dist/bench/ha/failover-bench.js [--rounds N] [--lease-ttl S]
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { EtcdCluster } from '../../test/helpers/etcd-process.js';
import { api, startAgent, type AgentProcess } from '../../test/integration/helpers/agent-process.js';
import { percentile } from '../percentile.js';

const GOAL_MEDIAN_SECONDS = 3;

function parseArgs(argv: string[]): { rounds: number; leaseTtl: number } {
  const out = { rounds: 5, leaseTtl: 2 };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const n = Number(argv[++i]);
    if (!Number.isInteger(n) || n < 1) throw new Error(`${a}: must be a positive integer`);
    if (a === '--rounds') out.rounds = n;
    else if (a === '--lease-ttl') out.leaseTtl = n;
    else throw new Error(`unknown argument "${a}"`);
  }
  return out;
}

function job(id: string): unknown {
  return {
    Job: {
      ID: id,
      Name: id,
      Type: 'batch',
      Datacenters: ['dc1'],
      TaskGroups: [{ Name: 'g', Count: 1, Tasks: [{ Name: 't', Driver: 'raw_exec', Config: { command: '/bin/true' }, Resources: { CPU: 20, MemoryMB: 16 } }] }],
    },
  };
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 60_000, everyMs = 20): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

async function leaderOf(servers: AgentProcess[]): Promise<AgentProcess> {
  return until('a leader', async () => {
    for (const s of servers) {
      const r = await api<string>(s.address, 'GET', '/v1/status/leader').catch(() => null);
      if (r?.status === 200 && `http://${r.body}` === s.address) return s;
    }
    return undefined;
  });
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const etcd = await EtcdCluster.start(1);
  const dir = await mkdtemp(join(tmpdir(), 'caravan-failover-'));
  const config = join(dir, 'server.hcl');
  await writeFile(config, `server {\n  etcd {\n    endpoints = ["${etcd.endpoints[0]}"]\n    lease_ttl = "${args.leaseTtl}s"\n  }\n}\n`);
  const servers: AgentProcess[] = [];
  let client: AgentProcess | null = null;
  const samples: number[] = [];
  try {
    for (const name of ['s1', 's2', 's3']) servers.push(await startAgent({ roleArgs: ['-server'], rawExec: false, extraArgs: ['-node', name, '-config', config, '-log-level', 'warn'] }));
    client = await startAgent({
      roleArgs: ['-client'],
      dataDir: await mkdtemp('/tmp/cv-'),
      extraArgs: ['-servers', servers.map((s) => s.address.replace('http://', '')).join(','), '-log-level', 'warn'],
    });
    for (let round = 0; round < args.rounds; round++) {
      const leader = await leaderOf(servers);
      const id = `failover-${round}`;
      const t0 = performance.now();
      await leader.kill();
      const live = servers.filter((s) => s !== leader);
      // Accepted: the first server to answer 200 (followers refuse until a new leader exists).
      await until('the job accepted', async () => {
        for (const s of live) {
          const r = await api(s.address, 'PUT', '/v1/jobs', job(id)).catch(() => null);
          if (r?.status === 200) return true;
        }
        return undefined;
      });
      const accepted = (performance.now() - t0) / 1000;
      await until('the job placed', async () => {
        for (const s of live) {
          const r = await api<unknown[]>(s.address, 'GET', `/v1/job/${id}/allocations`).catch(() => null);
          if (r?.status === 200 && Array.isArray(r.body) && r.body.length > 0) return true;
        }
        return undefined;
      });
      const placed = (performance.now() - t0) / 1000;
      samples.push(placed);
      console.log(`round ${round + 1}: accepted after ${accepted.toFixed(2)} s, placed after ${placed.toFixed(2)} s`);
      // The killed server comes back and follows before the next round.
      const i = servers.indexOf(leader);
      servers[i] = await startAgent({ roleArgs: ['-server'], rawExec: false, dataDir: leader.dataDir, port: leader.port, extraArgs: ['-node', `s${i + 1}`, '-config', config, '-log-level', 'warn'] });
      await until('the restarted server to follow', async () => {
        const r = await api<unknown[]>(servers[i]!.address, 'GET', `/v1/job/${id}/allocations`);
        return r.status === 200 && r.body.length > 0 ? true : undefined;
      });
    }
    const sorted = [...samples].sort((a, b) => a - b);
    const median = percentile(sorted, 50);
    const p90 = percentile(sorted, 90);
    console.log('');
    console.log(`failover: kill -9 of the leader → new job accepted and placed (${args.rounds} rounds, lease TTL ${args.leaseTtl} s, load ${loadavg()[0]!.toFixed(1)} on ${cpus().length} cores)`);
    console.log(`  median            ${median.toFixed(2).padStart(8)} s   goal ≤ ${GOAL_MEDIAN_SECONDS} s  ${median <= GOAL_MEDIAN_SECONDS ? 'MET' : 'NOT MET'}`);
    console.log(`  p90               ${p90.toFixed(2).padStart(8)} s`);
    const out = join(dirname(fileURLToPath(import.meta.url)), '../../../bench/results/failover.json');
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(
      out,
      JSON.stringify(
        { benchmark: 'failover', date: new Date().toISOString(), rounds: args.rounds, leaseTtlSeconds: args.leaseTtl, samplesSeconds: samples, medianSeconds: median, p90Seconds: p90, goal: { medianSeconds: GOAL_MEDIAN_SECONDS }, met: median <= GOAL_MEDIAN_SECONDS },
        null,
        2,
      ) + '\n',
    );
    console.log(`  results           ${out}`);
  } finally {
    if (client) {
      await client.kill();
      await client.cleanup();
    }
    for (const s of servers) {
      await s.kill();
      await s.cleanup();
    }
    await etcd.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(`failover bench: ${(err as Error).message}`);
  process.exit(1);
});
