/**
 * A state store driven through the real FSM for drainer tests: nodes, jobs and allocations are
 * inserted with log commands, the drainer's writes are applied as the server would, and
 * `migrate()` plays the scheduler's part (stop the marked allocations, place replacements).
 */
import { Fsm } from '../../../src/server/fsm/fsm.js';
import type { Command } from '../../../src/server/fsm/commands.js';
import { StateStore } from '../../../src/server/state/state-store.js';
import { drainUpdateCommand, drainCompleteCommand, type NodeDrainRequest } from '../../../src/server/drain/node-drain-update.js';
import { NodeDrainer } from '../../../src/server/drain/node-drainer.js';
import type { Allocation, Evaluation, Job, Node } from '../../../src/structs/index.js';
import { FakeClock } from '../../../src/time/clock.js';
import { mockAlloc, mockEval, mockNode } from '../../mock/factories.js';

/** The fixture (see the file comment). */
export class DrainFixture {
  readonly state = new StateStore();
  readonly fsm = new Fsm(this.state);
  readonly clock = new FakeClock();
  readonly evals: Evaluation[] = [];
  index = 0;
  readonly drainer: NodeDrainer;

  constructor() {
    this.drainer = new NodeDrainer({
      state: this.state,
      clock: this.clock,
      markForMigration: async (transitions, evals) => {
        this.evals.push(...evals);
        this.apply({ Type: 'AllocUpdateDesiredTransition', Allocs: transitions, Evals: evals, Now: this.clock.now() * 1e6 });
      },
      completeDrain: async (nodeId) => {
        this.apply(drainCompleteCommand(nodeId, this.clock.now()));
      },
      newEval: (job) => mockEval(job, { TriggeredBy: 'node-drain' }),
    });
  }

  apply(cmd: Command): number {
    this.fsm.apply(cmd, ++this.index);
    return this.index;
  }

  node(name: string): Node {
    const n = mockNode({ Name: name });
    this.apply({ Type: 'NodeRegister', Node: n, Evals: [], Now: this.clock.now() * 1e6 });
    return this.state.nodeById(n.ID)!;
  }

  job(job: Job): Job {
    this.apply({ Type: 'JobRegister', Job: job, Eval: null, Now: this.clock.now() * 1e6 });
    return this.state.jobById(job.Namespace, job.ID)!;
  }

  /** Places `count` running allocations of `job` on `node`. */
  allocs(job: Job, node: Node, count: number, over: Partial<Allocation> = {}): Allocation[] {
    const out: Allocation[] = [];
    for (let i = 0; i < count; i++) out.push(mockAlloc(job, node, { Name: `${job.ID}.${job.TaskGroups[0]!.Name}[${i}]`, ...over }));
    this.apply({ Type: 'ApplyPlanResults', EvalID: 'e', Job: job, AllocsUpdated: out, AllocsStopped: [], Deployment: null, DeploymentUpdates: [], Evals: [], Now: this.clock.now() * 1e6 });
    // The plan keeps client status of existing allocs only; new ones take what they carry.
    return out.map((a) => this.state.allocById(a.ID)!);
  }

  drain(node: Node, req: Partial<NodeDrainRequest> & { DrainSpec: NodeDrainRequest['DrainSpec'] }): void {
    const full: NodeDrainRequest = { MarkEligible: false, Meta: null, ...req };
    this.apply(drainUpdateCommand(this.state.nodeById(node.ID)!, full, this.clock.now(), []));
  }

  /** IDs of the allocations marked for migration and still desired to run. */
  marked(): string[] {
    return this.state.allocs().filter((a) => a.DesiredTransition.Migrate === true && a.DesiredStatus === 'run').map((a) => a.ID);
  }

  /** The scheduler's part: stop every marked allocation; place a `status` replacement on `to`. */
  migrate(to: Node | null, status: Allocation['ClientStatus'] = 'pending'): Allocation[] {
    const marked = this.state.allocs().filter((a) => a.DesiredTransition.Migrate === true && a.DesiredStatus === 'run');
    const replacements = to
      ? marked.map((a) => mockAlloc(a.Job!, to, { Name: a.Name, TaskGroup: a.TaskGroup, PreviousAllocation: a.ID, ClientStatus: status }))
      : [];
    this.apply({
      Type: 'ApplyPlanResults',
      EvalID: 'e',
      Job: null,
      AllocsUpdated: replacements,
      AllocsStopped: marked.map((a) => ({ ID: a.ID, DesiredStatus: 'stop', DesiredDescription: 'alloc is being migrated', ClientStatus: '', FollowupEvalID: '' })),
      Deployment: null,
      DeploymentUpdates: [],
      Evals: [],
      Now: this.clock.now() * 1e6,
    });
    return replacements.map((a) => this.state.allocById(a.ID)!);
  }

  /** The client's part: report allocations running. */
  run(allocs: Allocation[]): void {
    this.apply({
      Type: 'AllocClientUpdate',
      Allocs: allocs.map((a) => ({ ID: a.ID, NodeID: a.NodeID, ClientStatus: 'running', ClientDescription: '', TaskStates: {} })),
      Evals: [],
      Now: this.clock.now() * 1e6,
    });
  }
}
