/**
 * A Jepsen-style fault run (issue 33): etcd, three servers and two clients on loopback
 * (fault-cluster.ts), the recorded workload running throughout (fault-workload.ts) plus a running
 * service job that gets a rolling deployment half way, and faults injected one at a time in an
 * order drawn from the seed — kill -9 and restart of etcd, of the leader, of a follower, of a
 * client; the leader SIGSTOPped past its lease; a server cut from etcd by the firewall. After
 * each fault heals, the time until a leader accepts writes again is measured. At the end the
 * history is checked: linearizable reads, no two leaders at once, every acknowledged write on
 * every server with one value, the job's tasks neither lost nor doubled, and no agent crashed.
 * The schedule (order, victims, durations) replays from the seed; the workload's interleaving
 * depends on timing and does not.
 */
import { readdir, readFile } from 'node:fs/promises';
import { performance } from 'node:perf_hooks';
import { FaultCluster, type AgentSlot, type Crash } from './fault-cluster.js';
import { call, readValue, registerJob, sleep, Workload, type WorkloadHistory } from './fault-workload.js';
import { checkRegisters, type LinearizabilityResult } from './register-linearizability.js';
import { checkFinalValues, leaderConflicts, type LeaderConflict, type ValueProblem } from './fault-checks.js';
import { SeededRandom } from './seeded-random.js';

export type FaultKind = 'etcd-restart' | 'leader-kill' | 'follower-kill' | 'client-kill' | 'leader-pause' | 'etcd-partition';

export interface FaultSuiteOptions {
  seed: number;
  etcdRestarts: number;
  leaderKills: number;
  followerKills: number;
  clientKills: number;
  leaderPauses: number;
  partitions: number;
  leaseTtlSeconds?: number;
  snapshotThreshold?: number;
  /** A running service job with a rolling deployment half way (default true). */
  runningJob?: boolean;
  /** Progress lines (default none). */
  log?: (line: string) => void;
}

export interface FaultRound {
  n: number;
  kind: FaultKind;
  victim: string;
  /** How long the fault lasted (ms). */
  faultMs: number;
  /** From the heal (etcd healthy again, the victim resumed or reconnected, or the kill for a leader) to the first write accepted (ms); null: none within the wait. */
  recoverMs: number | null;
}

export interface TaskCheck {
  expected: number;
  running: number;
  processes: number;
  atLatestVersion: boolean;
  deployment: string;
  lost: number;
  doubled: number;
}

export interface FaultReport {
  seed: number;
  rounds: FaultRound[];
  firewall: boolean;
  /** observations: answers of /v1/agent/self; leaderClaims: those where a server said it leads, naming its term. */
  history: Pick<WorkloadHistory, 'acked' | 'unknown' | 'reads'> & { staleReads: number; observations: number; leaderClaims: number };
  linearizability: LinearizabilityResult;
  lost: ValueProblem[];
  divergent: string[];
  leaderConflicts: LeaderConflict[];
  crashes: Crash[];
  tasks: TaskCheck | null;
  durationMs: number;
}

const KEYS_PER_ROUND = 3;
const KEY_LIFETIME_MS = 2000;
/** How long recovery is waited for before the round counts as not recovered. */
const RECOVERY_WAIT_MS = 60_000;

export async function runFaultSuite(o: FaultSuiteOptions): Promise<FaultReport> {
  const log = o.log ?? (() => undefined);
  const started = performance.now();
  const random = new SeededRandom(o.seed);
  const ttl = o.leaseTtlSeconds ?? 2;
  const firewall = FaultCluster.firewallAvailable();
  const kinds: FaultKind[] = [
    ...Array<FaultKind>(o.etcdRestarts).fill('etcd-restart'),
    ...Array<FaultKind>(o.leaderKills).fill('leader-kill'),
    ...Array<FaultKind>(o.followerKills).fill('follower-kill'),
    ...Array<FaultKind>(o.clientKills).fill('client-kill'),
    ...Array<FaultKind>(o.leaderPauses).fill('leader-pause'),
    ...Array<FaultKind>(firewall ? o.partitions : 0).fill('etcd-partition'),
  ];
  const schedule = random.shuffle(kinds);
  log(`seed ${o.seed}: ${schedule.length} faults${!firewall && o.partitions > 0 ? ' (no iptables here: partitions left out)' : ''}`);

  const cluster = await FaultCluster.start({ leaseTtlSeconds: ttl, snapshotThreshold: o.snapshotThreshold ?? 400 });
  let round = 0;
  // Fresh keys every KEY_LIFETIME_MS: short histories per key keep the linearizability search small.
  const keys = (): string[] => {
    const slice = Math.floor((performance.now() - started) / KEY_LIFETIME_MS);
    return Array.from({ length: KEYS_PER_ROUND }, (_, k) => `lin-${round}-${slice}-${k}`);
  };
  const servers = () => cluster.liveServers().map((s) => ({ name: s.name, address: cluster.address(s) }));
  const svc = `svc-${o.seed}`;
  const rounds: FaultRound[] = [];
  let workload: Workload | null = null;
  try {
    await waitForWrite(cluster, RECOVERY_WAIT_MS);
    if (o.runningJob !== false) await registerService(cluster, svc, 'v0');
    // The workload's own random stream: its draws depend on timing, the schedule's must not.
    workload = new Workload({ random: new SeededRandom(o.seed ^ 0x5bd1e995), servers, keys, writers: 2, readers: 2, thinkMs: 15 });
    for (let i = 0; i < schedule.length; i++) {
      round = i + 1;
      const kind = schedule[i]!;
      if (o.runningJob !== false && i === Math.floor(schedule.length / 2)) await registerService(cluster, svc, 'v1');
      const r = await injectFault(cluster, kind, random, ttl, round);
      rounds.push(r);
      log(`round ${round}/${schedule.length}: ${kind} of ${r.victim} for ${r.faultMs.toFixed(0)} ms; writes accepted ${r.recoverMs === null ? 'NOT within the wait' : `${r.recoverMs.toFixed(0)} ms after the heal`}`);
      await sleep(random.int(300, 1200));
    }
    round++;
    await sleep(1000);
    await workload.stop();
    const history = workload.history;
    workload = null;

    // Every server back and caught up, then each answers every key from its own state.
    for (const s of [...cluster.servers, ...cluster.clients]) {
      cluster.resume(s);
      await cluster.restart(s);
    }
    await waitForWrite(cluster, RECOVERY_WAIT_MS);
    const allKeys = [...new Set(history.ops.map((op) => op.key))];
    const leader = await findLeader(cluster);
    const t0 = performance.now();
    for (const key of allKeys) {
      // A final read through the leader joins the history (a lost write shows as a violation too).
      const value = readValue(await call(cluster.address(leader), 'GET', `/v1/job/${key}`));
      if (value !== undefined) history.ops.push({ key, kind: 'read', value, call: t0, ret: performance.now() });
    }
    await waitCaughtUp(cluster, leader);
    const finals = new Map<string, Map<string, string | null>>();
    for (const key of allKeys) {
      const byServer = new Map<string, string | null>();
      for (const s of cluster.servers) {
        const value = readValue(await call(cluster.address(s), 'GET', `/v1/job/${key}?stale`));
        if (value !== undefined) byServer.set(s.name, value);
      }
      finals.set(key, byServer);
    }
    const values = checkFinalValues(history.ops, finals);
    const tasks = o.runningJob !== false ? await checkTasks(cluster, svc, 2) : null;
    return {
      seed: o.seed,
      rounds,
      firewall,
      history: { acked: history.acked, unknown: history.unknown, reads: history.reads, staleReads: history.staleReads.length, observations: history.observations.length, leaderClaims: history.observations.filter((x) => x.leader && x.term !== '').length },
      linearizability: checkRegisters(history.ops),
      lost: values.lost,
      divergent: values.divergent,
      leaderConflicts: leaderConflicts(history.observations),
      crashes: [...cluster.crashes],
      tasks,
      durationMs: performance.now() - started,
    };
  } finally {
    await workload?.stop();
    await cluster.stop();
  }
}

async function injectFault(cluster: FaultCluster, kind: FaultKind, random: SeededRandom, ttl: number, n: number): Promise<FaultRound> {
  const pastLease = ttl * 1000 * 2 + 1000;
  switch (kind) {
    case 'etcd-restart': {
      const down = random.int(500, 3000);
      await cluster.killEtcd();
      await sleep(down);
      await cluster.restartEtcd();
      const healed = performance.now();
      return { n, kind, victim: 'etcd', faultMs: down, recoverMs: await timeToWrite(cluster, healed) };
    }
    case 'leader-kill': {
      const leader = await findLeader(cluster);
      await cluster.kill(leader);
      const killed = performance.now();
      const recoverMs = await timeToWrite(cluster, killed);
      await sleep(random.int(200, 1500));
      await cluster.restart(leader);
      return { n, kind, victim: leader.name, faultMs: performance.now() - killed, recoverMs };
    }
    case 'follower-kill': {
      const leader = await findLeader(cluster);
      const victim = random.pick(cluster.servers.filter((s) => s !== leader && s.agent));
      const down = random.int(200, 2000);
      await cluster.kill(victim);
      await sleep(down);
      await cluster.restart(victim);
      return { n, kind, victim: victim.name, faultMs: down, recoverMs: await timeToWrite(cluster, performance.now()) };
    }
    case 'client-kill': {
      const victim = random.pick(cluster.clients);
      const down = random.int(200, 3000);
      await cluster.kill(victim);
      await sleep(down);
      await cluster.restart(victim);
      return { n, kind, victim: victim.name, faultMs: down, recoverMs: await timeToWrite(cluster, performance.now()) };
    }
    case 'leader-pause': {
      const leader = await findLeader(cluster);
      cluster.pause(leader);
      const paused = performance.now();
      // The others elect a leader meanwhile; the paused one must not act on its old term when it wakes.
      await sleep(pastLease);
      cluster.resume(leader);
      return { n, kind, victim: leader.name, faultMs: performance.now() - paused, recoverMs: await timeToWrite(cluster, performance.now()) };
    }
    case 'etcd-partition': {
      // The leader half the time, else a follower.
      const leader = await findLeader(cluster);
      const victim = random.next() < 0.5 ? leader : random.pick(cluster.servers.filter((s) => s !== leader && s.agent));
      const i = cluster.servers.indexOf(victim);
      cluster.cutFromEtcd(i);
      const cut = performance.now();
      await sleep(pastLease);
      cluster.healAll();
      const healed = performance.now();
      // Recovered once writes are accepted through the victim itself (it follows or leads again).
      return { n, kind, victim: victim.name, faultMs: healed - cut, recoverMs: await timeToWrite(cluster, healed, victim) };
    }
  }
}

/** Milliseconds from `from` until a probe write is accepted (through `via` only, if given); null if not within the wait. */
async function timeToWrite(cluster: FaultCluster, from: number, via?: AgentSlot): Promise<number | null> {
  const at = await waitForWrite(cluster, RECOVERY_WAIT_MS, via).catch(() => null);
  return at === null ? null : at - from;
}

let probeSeq = 0;

/** Resolves with the time a probe write was first accepted; probes every 50 ms. */
async function waitForWrite(cluster: FaultCluster, timeoutMs: number, via?: AgentSlot): Promise<number> {
  const deadline = performance.now() + timeoutMs;
  while (performance.now() < deadline) {
    const targets = via ? [via].filter((s) => s.agent && !s.paused) : cluster.liveServers();
    const results = await Promise.all(
      targets.map(async (s) => {
        const res = await call(cluster.address(s), 'PUT', '/v1/jobs', registerJob(`probe-${probeSeq++ % 8}`, `p${probeSeq}`), 3000);
        return res?.status === 200 ? performance.now() : null;
      }),
    );
    const ok = results.filter((t): t is number => t !== null);
    if (ok.length > 0) return Math.min(...ok);
    await sleep(50);
  }
  throw new Error(`no write accepted within ${timeoutMs} ms`);
}

/** The server that says it leads (raft.state Leader). */
async function findLeader(cluster: FaultCluster): Promise<AgentSlot> {
  const deadline = performance.now() + RECOVERY_WAIT_MS;
  while (performance.now() < deadline) {
    for (const s of cluster.liveServers()) {
      const res = await call(cluster.address(s), 'GET', '/v1/agent/self', undefined, 2000);
      if ((res?.body as { stats?: { raft?: { state?: string } } } | undefined)?.stats?.raft?.state === 'Leader') return s;
    }
    await sleep(50);
  }
  throw new Error('no leader');
}

/** Waits until every server has applied what the leader had applied when called. */
async function waitCaughtUp(cluster: FaultCluster, leader: AgentSlot): Promise<void> {
  const applied = async (s: AgentSlot): Promise<number> => {
    const res = await call(cluster.address(s), 'GET', '/v1/agent/self', undefined, 2000);
    return Number((res?.body as { stats?: { raft?: { applied_index?: string } } } | undefined)?.stats?.raft?.applied_index ?? 0);
  };
  const target = await applied(leader);
  const deadline = performance.now() + RECOVERY_WAIT_MS;
  for (const s of cluster.servers) {
    while ((await applied(s)) < target && performance.now() < deadline) await sleep(100);
  }
}

async function registerService(cluster: FaultCluster, id: string, version: string): Promise<void> {
  const job = {
    Job: {
      ID: id,
      Name: id,
      Type: 'service',
      Datacenters: ['dc1'],
      Meta: { version },
      Update: { MaxParallel: 1, MinHealthyTime: 1_000_000_000, HealthyDeadline: 60_000_000_000, ProgressDeadline: 120_000_000_000 },
      TaskGroups: [
        {
          Name: 'g',
          Count: 2,
          Tasks: [{ Name: 't', Driver: 'raw_exec', Config: { command: '/bin/sleep', args: ['86413'] }, Resources: { CPU: 20, MemoryMB: 16 } }],
        },
      ],
    },
  };
  const deadline = performance.now() + RECOVERY_WAIT_MS;
  while (performance.now() < deadline) {
    for (const s of cluster.liveServers()) {
      const res = await call(cluster.address(s), 'PUT', '/v1/jobs', job);
      if (res?.status === 200) return;
    }
    await sleep(100);
  }
  throw new Error(`job ${id} not accepted`);
}

interface AllocStub {
  ID: string;
  ClientStatus: string;
  DesiredStatus: string;
  JobVersion: number;
}

/** The job's tasks once settled: `count` running at its latest version, as many task processes on the machine. */
async function checkTasks(cluster: FaultCluster, id: string, count: number): Promise<TaskCheck> {
  const deadline = performance.now() + 180_000;
  let last: TaskCheck | null = null;
  while (performance.now() < deadline) {
    const leader = await findLeader(cluster);
    const [allocs, job, deployment] = await Promise.all([
      call(cluster.address(leader), 'GET', `/v1/job/${id}/allocations`),
      call(cluster.address(leader), 'GET', `/v1/job/${id}`),
      call(cluster.address(leader), 'GET', `/v1/job/${id}/deployment`),
    ]);
    const list = (allocs?.body as AllocStub[] | undefined) ?? [];
    const version = (job?.body as { Version?: number } | undefined)?.Version ?? -1;
    const running = list.filter((a) => a.ClientStatus === 'running');
    const processes = await taskProcesses(id);
    last = {
      expected: count,
      running: running.length,
      processes,
      atLatestVersion: running.every((a) => a.JobVersion === version),
      deployment: (deployment?.body as { Status?: string } | undefined)?.Status ?? 'none',
      lost: Math.max(0, count - Math.min(running.length, processes)),
      doubled: Math.max(0, Math.max(running.length, processes) - count),
    };
    if (last.running === count && last.processes === count && last.atLatestVersion && last.deployment === 'successful') return last;
    await sleep(1000);
  }
  return last!;
}

/** Live task processes of the job on this machine (their environment names it; the topmost of each task). */
async function taskProcesses(jobId: string): Promise<number> {
  let n = 0;
  for (const pid of (await readdir('/proc')).filter((p) => /^\d+$/.test(p))) {
    try {
      const [environ, cmdline, status] = await Promise.all([
        readFile(`/proc/${pid}/environ`, 'utf8'),
        readFile(`/proc/${pid}/cmdline`, 'utf8'),
        readFile(`/proc/${pid}/status`, 'utf8'),
      ]);
      if (/^State:\s+Z/m.test(status)) continue;
      if (environ.split('\0').includes(`NOMAD_JOB_ID=${jobId}`) && cmdline.split('\0')[0] === '/bin/sleep') n++;
    } catch {
      // gone meanwhile
    }
  }
  return n;
}
