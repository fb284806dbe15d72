import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { LeaderEventLog } from '../../../src/server/leader/leader-event-log.js';
import type { StreamEvent } from '../../../src/server/events/event.js';
import type { Command } from '../../../src/server/fsm/commands.js';
import type { Deployment, Evaluation } from '../../../src/structs/index.js';
import { mockAlloc, mockAllocMetric, mockEval, mockJob, mockNode } from '../../mock/factories.js';

interface Line {
  level: number;
  msg: string;
  [k: string]: unknown;
}

function capture(): { log: LeaderEventLog; lines: Line[] } {
  const lines: Line[] = [];
  const logger = pino({ level: 'debug', base: null, timestamp: false }, { write: (s: string) => void lines.push(JSON.parse(s) as Line) });
  return { log: new LeaderEventLog(logger), lines };
}

function evalEvent(e: Evaluation, index: number): StreamEvent {
  return { Topic: 'Evaluation', Type: 'EvaluationUpdated', Key: e.ID, Namespace: e.Namespace, FilterKeys: null, Index: index, Payload: { Evaluation: e } };
}

function deploymentEvent(d: Deployment, index: number): StreamEvent {
  return { Topic: 'Deployment', Type: 'DeploymentStatusUpdate', Key: d.ID, Namespace: d.Namespace, FilterKeys: null, Index: index, Payload: { Deployment: d } };
}

const NOW = 1_700_000_000_000_000_000;

describe('LeaderEventLog', () => {
  it('logs an evaluation once processed, with the placements of its plans and each group it could not place', () => {
    const { log, lines } = capture();
    const job = mockJob({ ID: 'web' });
    const e = mockEval(job, { ID: 'e1' });
    log.record({ Type: 'JobRegister', Job: job, Eval: e, Now: NOW }, 10, [evalEvent(e, 10)]);
    const placed = mockAlloc(job, mockNode(), { EvalID: 'e1', CreateIndex: 11 });
    const kept = mockAlloc(job, mockNode(), { EvalID: 'e1', CreateIndex: 5 });
    const apply = { Type: 'ApplyPlanResults', EvalID: 'e1', Job: job, AllocsUpdated: [placed, kept], AllocsStopped: [], Deployment: null, DeploymentUpdates: [], Evals: [], Now: NOW } as Command;
    const allocEvent = (a: typeof placed): StreamEvent => ({ Topic: 'Allocation', Type: 'PlanResult', Key: a.ID, Namespace: a.Namespace, FilterKeys: null, Index: 11, Payload: { Allocation: a } });
    log.record(apply, 11, [allocEvent(placed), allocEvent(kept)]);
    const done = { ...e, Status: 'complete' as const, BlockedEval: 'b1', FailedTGAllocs: { cache: mockAllocMetric({ NodesEvaluated: 1, ConstraintFiltered: { 'missing drivers': 1 }, CoalescedFailures: 2 }) } };
    log.record({ Type: 'EvalUpdate', Evals: [done], Now: NOW }, 12, [evalEvent(done, 12)]);
    // A repeat of the finished evaluation is not a second outcome.
    assert.deepEqual(
      lines.filter((l) => l.level >= 30).map((l) => l.msg),
      ['job registered', 'evaluation processed', 'failed to place allocations'],
    );
    const processed = lines.find((l) => l.msg === 'evaluation processed')!;
    assert.equal(processed.placed, 1);
    assert.equal(processed.failed_groups, 1);
    const failure = lines.find((l) => l.msg === 'failed to place allocations')!;
    assert.deepEqual({ level: failure.level, group: failure.task_group, failed: failure.failed, reason: failure.reason, blocked: failure.blocked_eval }, { level: 40, group: 'cache', failed: 3, reason: 'Constraint "missing drivers": 1 nodes excluded by filter', blocked: 'b1' });
    assert.ok(lines.some((l) => l.msg === 'allocation placed' && l.level === 20 && l.alloc_id === placed.ID));
  });

  it('logs a deployment when created and when its status changes, not when it is republished unchanged', () => {
    const { log, lines } = capture();
    const d = { ID: 'd1', JobID: 'web', Namespace: 'default', JobVersion: 1, Status: 'running', StatusDescription: 'Deployment is running', CreateIndex: 20 } as Deployment;
    log.record({ Type: 'DeploymentUpsert', Deployment: d, Now: NOW }, 20, [deploymentEvent(d, 20)]);
    log.record({ Type: 'DeploymentUpsert', Deployment: d, Now: NOW }, 21, [deploymentEvent(d, 21)]);
    const failed: Deployment = { ...d, Status: 'failed', StatusDescription: 'Failed due to progress deadline' };
    log.record({ Type: 'DeploymentUpsert', Deployment: failed, Now: NOW }, 22, [deploymentEvent(failed, 22)]);
    assert.deepEqual(lines.map((l) => [l.msg, l.status, l.previous_status]), [
      ['deployment created', 'running', undefined],
      ['deployment status changed', 'failed', 'running'],
    ]);
  });

  it('logs job deregistrations, node status changes and drains', () => {
    const { log, lines } = capture();
    log.record({ Type: 'JobDeregister', Namespace: 'default', JobID: 'web', Purge: false, Eval: null, Now: NOW }, 30, []);
    log.record({ Type: 'NodeUpdateStatus', NodeID: 'n1', Status: 'down', Event: null, Evals: [], Now: NOW }, 31, []);
    const drain = { Deadline: 3_600_000_000_000, IgnoreSystemJobs: false, ForceDeadline: '', StartedAt: '' };
    log.record({ Type: 'NodeUpdateDrain', NodeID: 'n1', DrainStrategy: drain, MarkEligible: false, Status: 'draining', Meta: null, Event: null, Evals: [], Now: NOW }, 32, []);
    log.record({ Type: 'NodeUpdateDrain', NodeID: 'n1', DrainStrategy: null, MarkEligible: false, Status: 'complete', Meta: null, Event: null, Evals: [], Now: NOW }, 33, []);
    log.record({ Type: 'NodeUpdateDrain', NodeID: 'n1', DrainStrategy: null, MarkEligible: true, Status: 'canceled', Meta: null, Event: null, Evals: [], Now: NOW }, 34, []);
    assert.deepEqual(lines.map((l) => l.msg), ['job deregistered', 'node status changed', 'node drain set', 'node drain complete', 'node drain canceled']);
    assert.ok(lines.every((l) => typeof l.node_id === 'string' || l.job_id === 'web'));
  });
});
