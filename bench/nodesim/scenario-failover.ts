/**
 * Scenario 5 of the node simulator (issue 30): kill -9 of the leader of three servers on etcd
 * during the steady state (a job submitted every second, allocations of 30 s tasks ending and
 * being replaced: a stream of alloc updates). Goals: a new leader serving writes ≤ 3 s after the
 * kill, 0 nodes marked down, 0 allocations lost or restarted.
 *
 * `startEtcdServers` starts one etcd member (Debian's `etcd` binary, as the tests start it) and
 * three `caravan agent -server` on it, on loopback. `runFailoverScenario` then:
 *   1. submits a job a second, each to the next live server, retrying on the others until one
 *      acknowledges it (as a client of the API would), for `beforeSeconds`;
 *   2. records every allocation (ID, ClientStatus, task restarts) and the nodes' statuses;
 *   3. kills the leader with SIGKILL and times the first write acknowledged after it (a probe job
 *      registration sent to every live server in turn every 50 ms);
 *   4. keeps the steady traffic going for `afterSeconds` (longer than the failover heartbeat TTL
 *      it gives the servers, so a node that never reached the new leader is marked down inside
 *      the run);
 *   5. compares: allocations that existed before the kill and are now gone, lost, failed or
 *      restarted; nodes marked down since the kill and the allocations lost with them, counted as
 *      they happen (the bench's DownCounter, down-counter.ts: a node marked down and ready again
 *      before the end counts); jobs acknowledged but never placed (an evaluation lost with the
 *      old leader).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { EtcdCluster } from '../../test/helpers/etcd-process.js';
import { api, startAgent, type AgentProcess } from '../../test/integration/helpers/agent-process.js';
import { percentile } from '../percentile.js';
import type { NodesimServers } from './nodesim-servers.js';
import { SIM_DATACENTERS } from './simulated-node.js';
import { startFailoverProbe } from './failover-probe.js';
import type { DownCounter } from './down-counter.js';

/** One printed figure (the bench's). */
export interface FailoverFigure {
  scenario: string;
  value: string;
  goal: string;
  met: boolean | null;
}

/** Options of startEtcdServers. */
export interface EtcdServersOptions {
  /** V8 heap of each server (MB). */
  heapMB?: number;
  /** Nomad's failover_heartbeat_ttl given to the servers, in seconds. */
  failoverHeartbeatTtlSeconds: number;
}

/** Three servers on one etcd member; `stop()` kills whatever is left of them and etcd. */
export async function startEtcdServers(opts: EtcdServersOptions): Promise<NodesimServers> {
  const etcd = await EtcdCluster.start(1);
  const dir = mkdtempSync(join(tmpdir(), 'caravan-nodesim-etcd-'));
  const config = join(dir, 'server.hcl');
  writeFileSync(config, `server {\n  failover_heartbeat_ttl = "${opts.failoverHeartbeatTtlSeconds}s"\n  etcd {\n    endpoints = ["${etcd.endpoints[0]!}"]\n  }\n}\n`);
  const processes: AgentProcess[] = [];
  const stop = async (): Promise<void> => {
    for (const s of processes) {
      if (process.env.NODESIM_SERVER_LOGS) writeFileSync(join(process.env.NODESIM_SERVER_LOGS, `${s.port}.log`), s.output().stdout + s.output().stderr);
      await s.kill();
      await s.cleanup();
    }
    await etcd.stop();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    for (const name of ['nodesim-s1', 'nodesim-s2', 'nodesim-s3']) {
      processes.push(
        await startAgent({
          roleArgs: ['-server'],
          rawExec: false,
          extraArgs: ['-node', name, '-config', config, '-log-level', process.env.NODESIM_SERVER_LOGS ? 'info' : 'warn'],
          readyTimeoutMs: 60_000,
          ...(opts.heapMB ? { env: { NODE_OPTIONS: `--max-old-space-size=${opts.heapMB}` } } : {}),
        }),
      );
    }
  } catch (err) {
    await stop();
    throw err;
  }
  return { addresses: processes.map((p) => p.address.replace(/^http:\/\//, '')), processes, stop };
}

/** Options of runFailoverScenario. */
export interface FailoverOptions {
  servers: NodesimServers;
  nodes: number;
  /** Steady traffic before the kill (s). */
  beforeSeconds: number;
  /** Steady traffic after the kill (s); longer than the failover heartbeat TTL to see a node marked down. */
  afterSeconds: number;
  print: (f: FailoverFigure) => void;
  /** The simulated clients' warnings so far, by message (a failed heartbeat is one). */
  clientWarnings: () => Record<string, number>;
  /** The bench's count of nodes marked down and allocations lost, following the servers' events. */
  downs: DownCounter;
}

/** What the scenario leaves for the rest of the bench: a live server, the new leader's pid, its figures. */
export interface FailoverResult {
  address: string;
  pid: number | undefined;
  extra: Record<string, unknown>;
}

interface TaskStateStub {
  Restarts?: number;
}

interface AllocStub {
  ID: string;
  JobID: string;
  NodeID: string;
  ClientStatus: string;
  DesiredStatus: string;
  TaskStates?: Record<string, TaskStateStub> | null;
}

interface NodeStub {
  ID: string;
  Status: string;
}

interface AllocRecord {
  jobId: string;
  nodeId: string;
  clientStatus: string;
  desiredStatus: string;
  restarts: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const secs = (ms: number) => `${(ms / 1000).toFixed(2)} s`;

function steadyJob(id: string, count: number, runFor: string): unknown {
  return {
    Job: {
      ID: id,
      Name: id,
      Type: 'batch',
      Datacenters: [...SIM_DATACENTERS],
      NodePool: 'all',
      TaskGroups: [{ Name: 'g', Count: count, Tasks: [{ Name: 't', Driver: 'mock_driver', Config: { run_for: runFor }, Resources: { CPU: 10, MemoryMB: 10 } }] }],
    },
  };
}

function restartsOf(a: AllocStub): number {
  return Object.values(a.TaskStates ?? {}).reduce((n, t) => n + (t.Restarts ?? 0), 0);
}

/** The first live server that answers `GET path` with 200, or null. */
async function readAny<T>(servers: AgentProcess[], path: string): Promise<T | null> {
  for (const s of servers) {
    const r = await api<T>(s.address, 'GET', path).catch(() => null);
    if (r?.status === 200) return r.body;
  }
  return null;
}

async function allocations(servers: AgentProcess[]): Promise<Map<string, AllocRecord>> {
  const list = await readAny<AllocStub[]>(servers, '/v1/allocations');
  if (!list) throw new Error('no server answered GET /v1/allocations');
  return new Map(list.map((a) => [a.ID, { jobId: a.JobID, nodeId: a.NodeID, clientStatus: a.ClientStatus, desiredStatus: a.DesiredStatus, restarts: restartsOf(a) }]));
}

/** The server that names itself leader (by its HTTP address). */
async function leaderOf(servers: AgentProcess[], timeoutMs: number): Promise<AgentProcess> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    for (const s of servers) {
      const r = await api<string>(s.address, 'GET', '/v1/status/leader').catch(() => null);
      if (r?.status === 200 && `http://${r.body}` === s.address) return s;
    }
    if (Date.now() > deadline) throw new Error('no server leads');
    await sleep(50);
  }
}

/** One job submission of the steady traffic: when it was sent, when acknowledged (-1: never), tries. */
interface Submission {
  id: string;
  sentMs: number;
  ackedMs: number;
  tries: number;
}

/**
 * A job a second, each sent to the next live server and retried on the others (every 100 ms)
 * until one acknowledges it; `stop()` ends it and resolves the history.
 */
function steadyTraffic(live: () => AgentProcess[]): { stop(): Promise<Submission[]> } {
  const history: Submission[] = [];
  let stopped = false;
  const run = (async () => {
    for (let i = 0; !stopped; i++) {
      const tick = performance.now();
      const id = `nodesim-failover-${i}`;
      const sub: Submission = { id, sentMs: tick, ackedMs: -1, tries: 0 };
      history.push(sub);
      for (let k = i; sub.ackedMs < 0 && !stopped; k++) {
        const servers = live();
        const s = servers[k % servers.length]!;
        sub.tries++;
        const r = await api(s.address, 'PUT', '/v1/jobs', steadyJob(id, 10, '30s')).catch(() => null);
        if (r?.status === 200) sub.ackedMs = performance.now();
        else await sleep(100);
      }
      await sleep(Math.max(0, 1000 - (performance.now() - tick)));
    }
  })();
  return {
    async stop() {
      stopped = true;
      await run;
      return history;
    },
  };
}

/** A change of the leader one server names ("" : none). */
interface LeaderChange {
  at: number;
  server: string;
  from: string;
  to: string;
}

/**
 * Asks every live server for the leader twice a second and records each change a server
 * reports, a moment without a leader included: a leader that loses its lease under load and
 * takes it again shows here (its own answer goes "" and back), a kill too.
 */
function leaderWatch(live: () => AgentProcess[]): { stop(): Promise<LeaderChange[]> } {
  const changes: LeaderChange[] = [];
  const named = new Map<string, string>();
  let stopped = false;
  const run = (async () => {
    while (!stopped) {
      await Promise.all(
        live().map(async (s) => {
          const r = await api<string>(s.address, 'GET', '/v1/status/leader').catch(() => null);
          if (r?.status !== 200 || typeof r.body !== 'string') return;
          const server = s.address.replace(/^http:\/\//, '');
          const before = named.get(server);
          if (before !== undefined && before !== r.body) changes.push({ at: Date.now(), server, from: before, to: r.body });
          named.set(server, r.body);
        }),
      );
      await sleep(500);
    }
  })();
  return {
    async stop() {
      stopped = true;
      await run;
      return changes;
    },
  };
}

/** Runs scenario 5 (see the file comment) against three started servers. */
export async function runFailoverScenario(opts: FailoverOptions): Promise<FailoverResult> {
  const all = opts.servers.processes;
  if (all.length < 3) throw new Error('scenario 5 needs the three servers it starts on etcd (not --servers)');
  let live = [...all];
  const traffic = steadyTraffic(() => live);
  const watch = leaderWatch(() => live);
  await sleep(opts.beforeSeconds * 1000);

  // Before: every allocation and the nodes, read from the leader.
  const leader = await leaderOf(all, 10_000);
  const before = await allocations([leader]);
  const nodesBefore = await readAny<NodeStub[]>([leader], '/v1/nodes');
  // Nodes the simulator already failed to keep alive (starved, before the kill): not the failover's.
  const downAtKill = new Set((nodesBefore ?? []).filter((n) => n.Status === 'down').map((n) => n.ID));
  const downBefore = downAtKill.size;
  const warningsBefore = opts.clientWarnings();
  const sinceKill = await opts.downs.open();

  // The kill, then the first write any live server acknowledges (timed from a thread of its own).
  live = all.filter((s) => s !== leader);
  const probe = await startFailoverProbe({ live: live.map((s) => s.address), killed: leader.address.replace(/^http:\/\//, ''), job: steadyJob('nodesim-failover-probe', 1, '1s'), timeoutMs: 120_000 });
  const killedAt = Date.now();
  const t0 = performance.now();
  leader.proc.kill('SIGKILL');
  const seen = await probe.go();
  const firstWriteMs = seen.firstWriteAt - killedAt;
  const leaderNamedMs = seen.leaderNamedAt - killedAt;
  const newLeader = await leaderOf(live, 30_000);
  opts.print({ scenario: '5. kill -9 of the leader: first write acknowledged', value: `${secs(firstWriteMs)} after the kill (leader named after ${secs(leaderNamedMs)})`, goal: '≤ 3 s', met: firstWriteMs <= 3000 });
  // Wall-clock times, to line the servers' logs (NODESIM_SERVER_LOGS) up with the kill.
  const iso = (ms: number): string => new Date(ms).toISOString();
  console.log(`  killed ${leader.address.replace(/^http:\/\//, '')} at ${iso(killedAt)}; leader named at ${iso(seen.leaderNamedAt)}, first write at ${iso(seen.firstWriteAt)}`);
  // The probe's write attempts (how the first write got through: held, refused, forwarded …).
  for (const a of seen.attempts) console.log(`    write to ${a.server}: sent +${secs(a.sentAt - killedAt)}, answered +${secs(a.answeredAt - killedAt)}: ${a.status}${a.error ? ` ${a.error.replace(/\s+/g, ' ')}` : ''}`);

  // After: the traffic goes on (the down counter follows the nodes meanwhile).
  await sleep(Math.max(0, t0 + opts.afterSeconds * 1000 - performance.now()));
  const history = await traffic.stop();
  const changes = await watch.stop();
  // The kill's own changes: from the killed leader (to none or the new one), then from none to
  // the new one. (Seen from the main thread, which the simulator may starve: not by time.)
  const killedAddr = leader.address.replace(/^http:\/\//, '');
  const newAddr = newLeader.address.replace(/^http:\/\//, '');
  const unplanned = changes.filter((c) => !(c.at >= killedAt && (c.from === killedAddr || (c.from === '' && c.to === newAddr))));
  opts.print({
    scenario: '5. leader changes besides the kill (servers\' own view)',
    value: `${unplanned.length}${unplanned.length > 0 ? ` (${unplanned.slice(0, 4).map((c) => `${c.server}: ${c.from || '-'} → ${c.to || '-'}`).join('; ')})` : ''}`,
    goal: '0',
    met: unplanned.length === 0,
  });
  // Jobs acknowledged in the last seconds get the time to be placed before they are counted.
  await sleep(5000);

  const after = await allocations([newLeader]);
  const nodesAfter = (await readAny<NodeStub[]>([newLeader], '/v1/nodes')) ?? [];
  const downAtEnd = nodesAfter.filter((n) => n.Status === 'down' && !downAtKill.has(n.ID)).length;
  // Counted from the kill on (a node the simulator starved earlier is not the failover's).
  const downs = await sinceKill.close();
  opts.print({
    scenario: '5. nodes marked down after the kill',
    value: `${downs.nodesMarkedDown} (${downs.nodes} nodes, ${downAtEnd} still down at the end; ${downBefore} down already at the kill${downs.resumed > 0 ? `; the stream resumed ${downs.resumed}×` : ''})`,
    goal: '0',
    met: downs.nodesMarkedDown === 0,
  });
  opts.print({ scenario: '5. allocations lost after the kill (their node marked down)', value: String(downs.allocsLost), goal: '0', met: downs.allocsLost === 0 });

  // Allocations that existed before the kill and had not ended, on nodes up at the kill: still
  // there, not lost, not failed, no task restarted. (Ending "complete" is the 30 s tasks' own doing.)
  let gone = 0;
  let lost = 0;
  let failed = 0;
  let restarted = 0;
  let stopped = 0;
  let live0 = 0;
  for (const [id, a] of before) {
    if (a.clientStatus !== 'running' && a.clientStatus !== 'pending') continue;
    if (downAtKill.has(a.nodeId)) continue;
    live0++;
    const b = after.get(id);
    if (!b) gone++;
    else if (b.clientStatus === 'lost') lost++;
    else if (b.clientStatus === 'failed') failed++;
    else {
      if (b.restarts > a.restarts) restarted++;
      if (b.desiredStatus !== 'run' && a.desiredStatus === 'run' && !b.jobId.startsWith('nodesim-failover-probe')) stopped++;
    }
  }
  const bad = gone + lost + failed + restarted + stopped;
  opts.print({
    scenario: `5. of ${live0} live allocations (nodes up at the kill): lost or restarted`,
    value: `${bad} (${gone} gone, ${lost} lost, ${failed} failed, ${restarted} restarted, ${stopped} stopped)`,
    goal: '0',
    met: bad === 0,
  });

  // Evaluations in flight at the kill: every acknowledged job has its allocations.
  const allocsByJob = new Map<string, number>();
  for (const a of after.values()) allocsByJob.set(a.jobId, (allocsByJob.get(a.jobId) ?? 0) + 1);
  const acked = history.filter((s) => s.ackedMs >= 0);
  const unplaced = acked.filter((s) => (allocsByJob.get(s.id) ?? 0) < 10).map((s) => s.id);
  opts.print({ scenario: `5. of ${acked.length} acknowledged jobs: never placed`, value: unplaced.length === 0 ? '0' : `${unplaced.length} (${unplaced.slice(0, 3).join(', ')})`, goal: '0', met: unplaced.length === 0 });

  // The steady traffic across the kill: the longest any submission waited, and how many retried.
  const waits = acked.map((s) => s.ackedMs - s.sentMs).sort((a, b) => a - b);
  const retried = history.filter((s) => s.tries > 1).length;
  opts.print({ scenario: '5. steady submissions across the kill: longest wait', value: `${secs(waits[waits.length - 1] ?? 0)} (${retried} retried, p50 ${secs(percentile(waits, 50))})`, goal: '≤ 3 s', met: (waits[waits.length - 1] ?? 0) <= 3000 });
  // What the clients saw fail (each retried): heartbeats, allocation watches, alloc updates.
  const warnings: Record<string, number> = {};
  for (const [msg, n] of Object.entries(opts.clientWarnings())) if (n > (warningsBefore[msg] ?? 0)) warnings[msg] = n - (warningsBefore[msg] ?? 0);
  const hbFailures = warnings['heartbeat failed; retrying'] ?? 0;
  opts.print({ scenario: '5. client heartbeats that failed (retried)', value: String(hbFailures), goal: 'none missed (see nodes down)', met: null });
  console.log(`  the clients' warnings after the kill: ${JSON.stringify(warnings)}`);
  return {
    address: newLeader.address,
    pid: newLeader.proc.pid,
    extra: {
      firstWriteMs,
      leaderNamedMs,
      leaderChanges: changes,
      newLeader: newLeader.address,
      killedLeader: leader.address,
      nodesDownAtKill: downBefore,
      nodesMarkedDownSinceKill: downs.nodesMarkedDown,
      nodesDownAtEnd: downAtEnd,
      allocsLostSinceKill: downs.allocsLost,
      liveAllocsAtKill: live0,
      allocsGone: gone,
      allocsLost: lost,
      allocsFailed: failed,
      allocsRestarted: restarted,
      allocsStopped: stopped,
      jobsAcknowledged: acked.length,
      jobsUnplaced: unplaced,
      submissionsRetried: retried,
      longestSubmissionWaitMs: waits[waits.length - 1] ?? 0,
      clientHeartbeatFailures: hbFailures,
      clientWarnings: warnings,
    },
  };
}
