/**
 * CPU of one node-update evaluation of a system job at N nodes (default 10,000), in process over
 * the real state store (the scheduler test harness, its plan applier included): the job runs on
 * every node; each round one node goes down (its evaluation stops the allocation as lost) and
 * comes back (its evaluation places a new one), and that second evaluation is measured — process
 * CPU (process.cpuUsage) and wall. Rounds alternate between the full walk (what the scheduler
 * remembered of the job's settled walks is forgotten first: as before docs/system-node-evaluation.md)
 * and the node-only walk, so both see the same machine load.
 *
 *   node --expose-gc dist/bench/scheduler/system-node-eval-bench.js [--nodes 10000] [--rounds 10] [--full-every 2]
 */
import { forgetSettledWalks } from '../../src/scheduler/settled-walk.js';
import { mockEval, mockNode, mockSystemJob } from '../../test/mock/factories.js';
import { SchedulerHarness } from '../../test/scheduler/harness.js';

function arg(name: string, dflt: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : dflt;
}

function median(xs: number[]): number {
  return [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;
}

async function main(): Promise<void> {
  const nodes = arg('nodes', 10_000);
  const rounds = arg('rounds', 10);
  // --full-every 1: every round walks in full; a large value: (almost) none does (for profiles).
  const fullEvery = arg('full-every', 2);
  const h = new SchedulerHarness();
  for (let i = 0; i < nodes; i++) {
    h.state.upsertNode(mockNode({ ID: `node-${i}`, SecretID: `s-${i}`, Datacenter: `dc${i % 3}`, NodeClass: `class-${i % 5}` }));
  }
  const job = mockSystemJob({ Datacenters: ['dc0', 'dc1', 'dc2'] });
  h.state.upsertJob(job);
  await h.process(mockEval(job));
  await h.process(mockEval(job, { TriggeredBy: 'node-update', NodeID: 'node-0' }));
  const owner = h.state.snapshot().nodesVersion!()!.owner;
  // CPU spent in the planner (the plan applier committing through the FSM, eval writes): the
  // same in both modes, reported apart from the scheduler's own.
  let plannerCpu = 0;
  for (const m of ['submitPlan', 'updateEval', 'createEval', 'reblockEval'] as const) {
    const inner = h[m].bind(h) as (x: never) => Promise<unknown>;
    (h as unknown as Record<string, unknown>)[m] = async (x: never) => {
      const c = process.cpuUsage();
      try {
        return await inner(x);
      } finally {
        const d = process.cpuUsage(c);
        plannerCpu += (d.user + d.system) / 1000;
      }
    };
  }
  const cpu = { full: [] as number[], node: [] as number[] };
  const schedCpu = { full: [] as number[], node: [] as number[] };
  const wall = { full: [] as number[], node: [] as number[] };
  for (let r = 0; r < rounds * 2; r++) {
    const mode = r % fullEvery === 0 ? 'full' : 'node';
    const id = `node-${1 + ((r * 7919) % (nodes - 1))}`;
    const evaluate = async (): Promise<void> => {
      if (mode === 'full') forgetSettledWalks(owner);
      await h.process(mockEval(job, { TriggeredBy: 'node-update', NodeID: id }));
    };
    h.state.upsertNode({ ...h.state.nodeById(id)!, Status: 'down' });
    await evaluate();
    h.state.upsertNode({ ...h.state.nodeById(id)!, Status: 'ready' });
    global.gc?.();
    plannerCpu = 0;
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    await evaluate();
    wall[mode].push(performance.now() - t0);
    const dc = process.cpuUsage(c0);
    cpu[mode].push((dc.user + dc.system) / 1000);
    schedCpu[mode].push((dc.user + dc.system) / 1000 - plannerCpu);
    if (Object.keys(h.lastPlan().NodeAllocation).join() !== id) throw new Error(`round ${r}: expected one placement on ${id}`);
  }
  for (const mode of ['full', 'node'] as const) {
    console.log(
      `${nodes} nodes, ${mode === 'full' ? 'full walk' : 'node-only'}: CPU median ${median(cpu[mode]).toFixed(1)} ms ` +
        `(min ${Math.min(...cpu[mode]).toFixed(1)}, max ${Math.max(...cpu[mode]).toFixed(1)}), of which the scheduler's ` +
        `${median(schedCpu[mode]).toFixed(1)} ms (min ${Math.min(...schedCpu[mode]).toFixed(1)}); wall median ${median(wall[mode]).toFixed(1)} ms; ${cpu[mode].length} rounds`,
    );
  }
}

void main();
