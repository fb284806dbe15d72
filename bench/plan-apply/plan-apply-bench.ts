/**
 * How long applying one big plan holds the leader's event loop: the real state store, FSM,
 * SQLite log (its append worker) and replicated log of a server, N simulated nodes, and the
 * system job's plan (one allocation on every node) computed by the real system scheduler, then
 * submitted to the real plan applier. A ticker on setImmediate records the longest gap between
 * two turns of the loop from submit until the plan is applied; the parts are timed on the way
 * (the FSM's apply, the events' publication, the log payload's encoding apart), and the longest gap
 * outside the FSM's apply (the check and the encoding, which yield).
 *
 *   node dist/bench/plan-apply/plan-apply-bench.js [--nodes 10000] [--runs 3]
 *   node --cpu-prof --cpu-prof-dir=/tmp/prof dist/bench/plan-apply/plan-apply-bench.js
 *   node --expose-gc dist/bench/plan-apply/plan-apply-bench.js --fsm-only --runs 5   (the FSM's apply alone)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { Job, Plan } from '../../src/structs/index.js';
import type { Command } from '../../src/server/fsm/commands.js';
import { canonicalizeJob } from '../../src/structs/job-defaults.js';
import { schedulerFactoryFor } from '../../src/scheduler/index.js';
import type { Planner } from '../../src/scheduler/interfaces.js';
import { EventBroker } from '../../src/server/events/event-broker.js';
import { encodeCommand } from '../../src/server/fsm/command-codec.js';
import { Fsm } from '../../src/server/fsm/fsm.js';
import { SqliteLogBackend } from '../../src/server/log/sqlite-log-backend.js';
import { newEvaluation } from '../../src/server/new-eval.js';
import { PlanApplier } from '../../src/server/plan/plan-applier.js';
import { ReplicatedLog } from '../../src/server/replication/replicated-log.js';
import { StateStore } from '../../src/server/state/state-store.js';
import { systemClock } from '../../src/time/clock.js';
import { simulatedNode } from '../scheduler/sim-cluster.js';

const NOW_NS = Date.now() * 1_000_000;

function systemJob(run: number): Job {
  return canonicalizeJob({
    ID: `sys-${run}`,
    Name: `sys-${run}`,
    Type: 'system',
    Datacenters: ['dc1'],
    TaskGroups: [
      {
        Name: 'g',
        Count: 1,
        EphemeralDisk: { SizeMB: 10 },
        Tasks: [{ Name: 't', Driver: 'mock_driver', Config: { run_for: '1h' }, Resources: { CPU: 10, MemoryMB: 16 } }],
      },
    ],
  });
}

/** Records the gaps between two turns of the event loop while running. */
class LoopGaps {
  max = 0;
  turns = 0;
  /** Gaps of more than 5 ms: [from, to]. */
  readonly long: [number, number][] = [];
  private last = performance.now();
  private running = true;
  constructor() {
    const tick = (): void => {
      if (!this.running) return;
      this.note(performance.now());
      this.turns++;
      setImmediate(tick);
    };
    setImmediate(tick);
  }
  stop(): void {
    this.running = false;
    this.note(performance.now());
  }
  /** The longest gap that does not contain `t`. */
  longestWithout(t: number): number {
    return Math.max(0, ...this.long.filter(([from, to]) => t < from || t > to).map(([from, to]) => to - from));
  }
  private note(now: number): void {
    this.max = Math.max(this.max, now - this.last);
    if (now - this.last > 5) this.long.push([this.last, now]);
    this.last = now;
  }
}

/** Wraps obj[name] to add its synchronous time to `times[label]`. */
function timeMethod<T extends object>(obj: T, name: keyof T & string, label: string, times: Map<string, number>): void {
  const orig = (obj[name] as (...a: unknown[]) => unknown).bind(obj);
  (obj as Record<string, unknown>)[name] = (...args: unknown[]): unknown => {
    const t = performance.now();
    try {
      return orig(...args);
    } finally {
      times.set(label, (times.get(label) ?? 0) + performance.now() - t);
    }
  };
}

/** The system scheduler's plan for the evaluation's job over the store (one allocation per node). */
async function systemPlan(store: StateStore, evaluation: ReturnType<typeof newEvaluation>): Promise<Plan> {
  let captured: Plan | null = null;
  const planner: Planner = {
    submitPlan: async (plan) => {
      captured = plan;
      return { result: { NodeUpdate: {}, NodeAllocation: plan.NodeAllocation, NodePreemptions: {}, Deployment: null, DeploymentUpdates: [], RefreshIndex: 0, AllocIndex: store.latestIndex() }, newState: null };
    },
    updateEval: async () => undefined,
    createEval: async () => undefined,
    reblockEval: async () => undefined,
  };
  await schedulerFactoryFor('system')!(store.snapshot(), planner, { now: Date.now(), random: Math.random }).process(evaluation);
  const plan = captured as Plan | null;
  if (!plan) throw new Error('the scheduler submitted no plan');
  return plan;
}

/**
 * The FSM's apply of the plan's log command alone, on a store written directly (no log), with
 * a snapshot alive as a worker's is while its plan is applied: the fastest of `runs`.
 */
async function fsmOnly(nodes: number, runs: number): Promise<void> {
  let best = Infinity;
  for (let run = 0; run < runs; run++) {
    const store = new StateStore();
    const fsm = new Fsm(store);
    let index = 0;
    for (let i = 0; i < nodes; i++) fsm.apply({ Type: 'NodeRegister', Node: simulatedNode(i), Evals: [], Now: NOW_NS }, ++index);
    const job = systemJob(run);
    fsm.apply({ Type: 'JobRegister', Job: job, Eval: null, Now: NOW_NS }, ++index);
    const stored = store.jobById(job.Namespace, job.ID)!;
    const plan = await systemPlan(store, newEvaluation(stored, 'job-register', NOW_NS));
    const snap = store.snapshot();
    if (globalThis.gc) globalThis.gc();
    const cmd: Command = { Type: 'ApplyPlanResults', EvalID: plan.EvalID, Job: plan.Job, AllocsUpdated: Object.values(plan.NodeAllocation).flat().map((a) => ({ ...a, Job: null })), AllocsStopped: [], Deployment: null, DeploymentUpdates: [], Evals: [], Now: NOW_NS };
    // CPU time (one thread here), which a loaded machine inflates less than the wall clock.
    const cpu = process.cpuUsage();
    const t = performance.now();
    fsm.apply(cmd, ++index);
    const ms = performance.now() - t;
    const { user, system } = process.cpuUsage(cpu);
    const cpuMs = (user + system) / 1000;
    best = Math.min(best, cpuMs);
    console.log(`fsm apply of ${store.allocs().length} placements: ${cpuMs.toFixed(0)} ms of CPU, ${ms.toFixed(0)} ms wall (snapshot alive at ${snap.index()})`);
  }
  console.log(`least CPU ${best.toFixed(0)} ms`);
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { nodes: { type: 'string', default: '10000' }, runs: { type: 'string', default: '3' }, 'fsm-only': { type: 'boolean', default: false } } });
  const nodes = Number(values.nodes);
  const runs = Number(values.runs);
  if (values['fsm-only']) return fsmOnly(nodes, runs);
  const dir = mkdtempSync(join(tmpdir(), 'plan-apply-bench-'));
  const log = SqliteLogBackend.open(dir);
  const store = new StateStore();
  const fsm = new Fsm(store);
  const events = new EventBroker(4096);
  const times = new Map<string, number>();
  timeMethod(fsm, 'apply', 'fsm apply', times);
  // When the plan's entry was applied (the FSM's apply is one turn by design).
  let planApplyAt = 0;
  const applyTimed = fsm.apply.bind(fsm);
  fsm.apply = (cmd, index) => {
    if (cmd.Type === 'ApplyPlanResults') planApplyAt = performance.now();
    return applyTimed(cmd, index);
  };
  timeMethod(events, 'publish', 'events publish', times);
  const replicated = await ReplicatedLog.open({ log, store, fsm, events, clock: systemClock, onApplied: () => undefined });
  const applier = new PlanApplier({ state: store, commit: (cmd) => replicated.propose(cmd), nowNanos: () => Date.now() * 1_000_000 });
  // The check (async: it yields) is timed by the loop's gaps, not here.
  const encodeTimes = new Map<string, number>();

  const t0 = performance.now();
  const regs: Promise<number>[] = [];
  for (let i = 0; i < nodes; i++) regs.push(replicated.propose({ Type: 'NodeRegister', Node: simulatedNode(i), Evals: [], Now: NOW_NS }));
  await Promise.all(regs);
  console.log(`${nodes} nodes registered in ${((performance.now() - t0) / 1000).toFixed(1)} s`);

  for (let run = 0; run < runs; run++) {
    const job = systemJob(run);
    await replicated.propose({ Type: 'JobRegister', Job: job, Eval: null, Now: NOW_NS });
    const stored = store.jobById(job.Namespace, job.ID)!;
    const evaluation = newEvaluation(stored, 'job-register', NOW_NS);
    await replicated.propose({ Type: 'EvalUpdate', Evals: [evaluation], Now: NOW_NS });
    const plan = await systemPlan(store, evaluation);
    const placing = Object.values(plan.NodeAllocation).reduce((n, a) => n + a.length, 0);
    if (globalThis.gc) globalThis.gc();
    times.clear();
    const gaps = new LoopGaps();
    const start = performance.now();
    const result = await applier.submit(plan);
    const wall = performance.now() - start;
    gaps.stop();
    const applied = Object.values(result.NodeAllocation).reduce((n, a) => n + a.length, 0);
    // The encoding is timed apart (it runs inside propose, which is not wrapped).
    const te = performance.now();
    encodeCommand({ Type: 'ApplyPlanResults', EvalID: plan.EvalID, Job: plan.Job, AllocsUpdated: Object.values(plan.NodeAllocation).flat().map((a) => ({ ...a, Job: null })), AllocsStopped: [], Deployment: null, DeploymentUpdates: [], Evals: [], Now: NOW_NS });
    encodeTimes.set('encode', performance.now() - te);
    const parts = [...times, ...encodeTimes].map(([k, v]) => `${k} ${v.toFixed(0)} ms`).join(', ');
    console.log(
      `run ${run} (at ${(start / 1000).toFixed(2)}–${((start + wall) / 1000).toFixed(2)} s): ${applied}/${placing} placed; submit→applied ${wall.toFixed(0)} ms; longest loop stall ${gaps.max.toFixed(0)} ms over ${gaps.turns} turns (${gaps.longestWithout(planApplyAt).toFixed(0)} ms outside the FSM's apply); ${parts}`,
    );
  }
  replicated.close();
  events.close();
  await log.close();
  rmSync(dir, { recursive: true, force: true });
}

void main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
