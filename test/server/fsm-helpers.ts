/** Helpers for server tests: commands built from the mock factories. */
import type { Allocation, Evaluation, Job, Node } from '../../src/structs/index.js';
import type { ApplyPlanResultsCommand, Command } from '../../src/server/fsm/commands.js';
import { mockAlloc, mockEval } from '../mock/factories.js';

export const NOW = 1_700_000_000_000 * 1_000_000;

export function registerCmd(job: Job, evaluation: Evaluation | null = null): Command {
  return { Type: 'JobRegister', Job: job, Eval: evaluation, Now: NOW };
}

export function nodeCmd(node: Node): Command {
  return { Type: 'NodeRegister', Node: node, Evals: [], Now: NOW };
}

/** A plan result placing `n` pending allocations of job's first group on node. */
export function placeCmd(job: Job, node: Node, n: number, over: Partial<Allocation> = {}): ApplyPlanResultsCommand {
  const allocs = Array.from({ length: n }, (_, i) =>
    mockAlloc(job, node, { ClientStatus: 'pending', Name: `${job.ID}.${job.TaskGroups[0]!.Name}[${i}]`, ...over }),
  );
  return {
    Type: 'ApplyPlanResults',
    EvalID: 'e',
    Job: job,
    AllocsUpdated: allocs.map((a) => ({ ...a, Job: null })),
    AllocsStopped: [],
    Deployment: null,
    DeploymentUpdates: [],
    Evals: [],
    Now: NOW,
  };
}

export function evalCmd(evals: Evaluation[]): Command {
  return { Type: 'EvalUpdate', Evals: evals, Now: NOW };
}

export { mockEval };
