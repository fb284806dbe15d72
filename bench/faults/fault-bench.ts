/**
 * The fault suite (issue 33): runs fault-suite.ts and prints its figures beside the goals, or,
 * with --footprint-jobs N, the etcd footprint scenario: N small jobs registered through three
 * servers on etcd, then etcd's database size (its Status call) and the snapshot sets under the
 * prefix. Writes bench/results/faults.json (or faults-footprint.json).
 *
 * Usage: node dist/bench/faults/fault-bench.js [--seed S] [--etcd-restarts N (50)] [--leader-kills N (5)]
 *   [--follower-kills N (5)] [--client-kills N (3)] [--leader-pauses N (3)] [--partitions N (3)]
 *   [--snapshot-threshold N (400)] [--footprint-jobs N]
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { runFaultSuite, type FaultKind, type FaultReport } from './fault-suite.js';
import { runFootprint, type FootprintReport } from './etcd-footprint.js';
import { percentile } from '../percentile.js';

const GOAL_RECOVERY_MS = 3000;
const GOAL_DB_BYTES = 256 * 1024 * 1024;
const GOAL_DB_JOBS = 40_000;

interface Args {
  seed: number;
  etcdRestarts: number;
  leaderKills: number;
  followerKills: number;
  clientKills: number;
  leaderPauses: number;
  partitions: number;
  snapshotThreshold: number;
  footprintJobs: number | null;
}

function parseArgs(argv: string[]): Args {
  const out: Args = {
    seed: Math.floor(Math.random() * 2 ** 31),
    etcdRestarts: 50,
    leaderKills: 5,
    followerKills: 5,
    clientKills: 3,
    leaderPauses: 3,
    partitions: 3,
    snapshotThreshold: 400,
    footprintJobs: null,
  };
  const names: Record<string, keyof Args> = {
    '--seed': 'seed',
    '--etcd-restarts': 'etcdRestarts',
    '--leader-kills': 'leaderKills',
    '--follower-kills': 'followerKills',
    '--client-kills': 'clientKills',
    '--leader-pauses': 'leaderPauses',
    '--partitions': 'partitions',
    '--snapshot-threshold': 'snapshotThreshold',
    '--footprint-jobs': 'footprintJobs',
  };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i]!;
    const name = names[flag];
    if (!name) throw new Error(`unknown argument "${flag}" (known: ${Object.keys(names).join(', ')})`);
    const n = Number(argv[++i]);
    if (!Number.isInteger(n) || n < 0) throw new Error(`${flag}: must be a non-negative integer, got "${argv[i] ?? ''}"`);
    (out as unknown as Record<string, number>)[name] = n;
  }
  return out;
}

function line(label: string, value: string, goal: string, met: boolean | null): void {
  console.log(`  ${label.padEnd(44)} ${value.padStart(12)}   goal ${goal.padEnd(10)} ${met === null ? '' : met ? 'MET' : 'NOT MET'}`);
}

function printFaults(r: FaultReport, args: Args): Record<string, unknown> {
  const byKind = new Map<FaultKind, number[]>();
  let unrecovered = 0;
  for (const round of r.rounds) {
    if (round.recoverMs === null) unrecovered++;
    else byKind.set(round.kind, [...(byKind.get(round.kind) ?? []), round.recoverMs]);
  }
  const etcd = [...(byKind.get('etcd-restart') ?? [])].sort((a, b) => a - b);
  const p99 = etcd.length > 0 ? percentile(etcd, 99) : NaN;
  const tasksOk = r.tasks === null || (r.tasks.lost === 0 && r.tasks.doubled === 0);
  console.log('');
  console.log(`fault suite, seed ${r.seed} (replay: --seed ${r.seed}), ${r.rounds.length} faults in ${(r.durationMs / 1000).toFixed(0)} s, load ${loadavg()[0]!.toFixed(1)} on ${cpus().length} cores`);
  console.log(`  history: ${r.history.acked} acknowledged writes, ${r.history.unknown} unknown, ${r.history.reads} reads (${r.history.staleReads} ?stale), ${r.history.observations} leader observations; ${r.linearizability.keys} keys checked`);
  if (!r.firewall) console.log('  iptables not available: no etcd partitions were run');
  line('lost acknowledged writes', String(r.lost.length), '0', r.lost.length === 0);
  line('divergent keys (servers disagree)', String(r.divergent.length), '0', r.divergent.length === 0);
  line('linearizability violations', String(r.linearizability.violations.length), '0', r.linearizability.violations.length === 0);
  if (r.linearizability.unknown.length > 0) console.log(`  (${r.linearizability.unknown.length} keys undecided within the search budget)`);
  line('two leaders at once', String(r.leaderConflicts.length), '0', r.leaderConflicts.length === 0);
  line('crashes', String(r.crashes.length), '0', r.crashes.length === 0);
  if (r.tasks) line('tasks lost / doubled', `${r.tasks.lost} / ${r.tasks.doubled}`, '0 / 0', tasksOk);
  if (r.tasks) console.log(`  (service job: ${r.tasks.running} of ${r.tasks.expected} running, ${r.tasks.processes} task processes, deployment ${r.tasks.deployment})`);
  line('rounds without recovery (60 s)', String(unrecovered), '0', unrecovered === 0);
  line(`etcd back → leader and write accepted, p99 (${etcd.length})`, `${(p99 / 1000).toFixed(2)} s`, '≤ 3 s', etcd.length === 0 ? null : p99 <= GOAL_RECOVERY_MS);
  for (const [kind, xs] of byKind) {
    const s = [...xs].sort((a, b) => a - b);
    console.log(`  recovery after ${kind.padEnd(15)} n=${String(s.length).padStart(3)}  p50 ${(percentile(s, 50) / 1000).toFixed(2)} s  p99 ${(percentile(s, 99) / 1000).toFixed(2)} s  max ${(s[s.length - 1]! / 1000).toFixed(2)} s`);
  }
  for (const v of r.linearizability.violations.slice(0, 5)) console.log(`  violation: key ${v.key} (${v.ops} ops)`);
  for (const l of r.lost.slice(0, 5)) console.log(`  lost: ${l.key} on ${l.server} = ${String(l.value)}, expected one of ${l.expected.join(', ')}`);
  for (const c of r.leaderConflicts.slice(0, 5)) console.log(`  leaders: ${c.why}`);
  for (const c of r.crashes) console.log(`  crash: ${c.name} exited (code ${c.code}, signal ${c.signal}):\n${c.output}`);
  return {
    args,
    seed: r.seed,
    rounds: r.rounds,
    history: r.history,
    lost: r.lost.length,
    divergent: r.divergent.length,
    linearizabilityViolations: r.linearizability.violations.length,
    leaderConflicts: r.leaderConflicts.length,
    crashes: r.crashes.length,
    tasks: r.tasks,
    etcdRecoveryP99Ms: p99,
    unrecovered,
    goals: { lost: 0, divergent: 0, violations: 0, crashes: 0, etcdRecoveryP99Ms: GOAL_RECOVERY_MS },
  };
}

function printFootprint(r: FootprintReport): Record<string, unknown> {
  const perJob = r.dbSizeBytes / r.jobs;
  const extrapolated = r.jobs >= GOAL_DB_JOBS ? r.dbSizeBytes : perJob * GOAL_DB_JOBS;
  console.log('');
  console.log(`etcd footprint: ${r.jobs} jobs registered in ${(r.durationMs / 1000).toFixed(0)} s (${(r.jobs / (r.durationMs / 1000)).toFixed(0)}/s), load ${loadavg()[0]!.toFixed(1)} on ${cpus().length} cores`);
  console.log(`  etcd db ${(r.dbSizeBytes / 2 ** 20).toFixed(1)} MiB (in use ${(r.dbSizeInUseBytes / 2 ** 20).toFixed(1)} MiB), data dir ${(r.dataDirBytes / 2 ** 20).toFixed(1)} MiB, ${r.keys} keys, ${r.snapshotSets} snapshot set(s), ${r.snapshotBytes} snapshot bytes stored`);
  console.log(`  peak etcd db seen ${(r.peakDbSizeBytes / 2 ** 20).toFixed(1)} MiB`);
  line(
    `etcd db at ${GOAL_DB_JOBS} jobs${r.jobs < GOAL_DB_JOBS ? ' (extrapolated linearly)' : ''}`,
    `${(extrapolated / 2 ** 20).toFixed(1)} MiB`,
    '≤ 256 MiB',
    extrapolated <= GOAL_DB_BYTES,
  );
  return { ...r, extrapolatedDbBytesAt40k: extrapolated, goal: { dbBytes: GOAL_DB_BYTES, jobs: GOAL_DB_JOBS } };
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const t0 = performance.now();
  const started = new Date().toISOString();
  let result: Record<string, unknown>;
  let name: string;
  if (args.footprintJobs !== null) {
    name = 'faults-footprint';
    result = printFootprint(await runFootprint({ jobs: args.footprintJobs, snapshotThreshold: 8192, log: (l) => console.log(l) }));
  } else {
    name = 'faults';
    result = printFaults(
      await runFaultSuite({
        seed: args.seed,
        etcdRestarts: args.etcdRestarts,
        leaderKills: args.leaderKills,
        followerKills: args.followerKills,
        clientKills: args.clientKills,
        leaderPauses: args.leaderPauses,
        partitions: args.partitions,
        snapshotThreshold: args.snapshotThreshold,
        log: (l) => console.log(l),
      }),
      args,
    );
  }
  const out = join(dirname(fileURLToPath(import.meta.url)), `../../../bench/results/${name}.json`);
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, JSON.stringify({ benchmark: name, date: started, seconds: (performance.now() - t0) / 1000, load: loadavg()[0], cores: cpus().length, ...result }, null, 2) + '\n');
  console.log(`  results ${out}`);
}

main().catch((err: unknown) => {
  console.error(`fault bench: ${(err as Error).stack ?? String(err)}`);
  process.exit(1);
});
