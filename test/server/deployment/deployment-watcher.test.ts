import { test } from 'node:test';
import assert from 'node:assert/strict';
import { StateStore } from '../../../src/server/state/state-store.js';
import { Fsm } from '../../../src/server/fsm/fsm.js';
import type { Command } from '../../../src/server/fsm/commands.js';
import { DeploymentWatcher } from '../../../src/server/deployment/deployment-watcher.js';
import { checkUnblock, planDeploymentAction } from '../../../src/server/deployment/deployment-actions.js';
import { newDeployment, newDeploymentState } from '../../../src/scheduler/deployment-rollout.js';
import { FakeClock, type Clock } from '../../../src/time/clock.js';
import { LONG_MS, pause, realTimersAt } from '../../time/real-timers.js';
import type { Allocation, Deployment, Evaluation, Job, UpdateStrategy } from '../../../src/structs/index.js';
import { mockEval, mockJob, mockNode, mockTask } from '../../mock/factories.js';
import { NOW, nodeCmd, placeCmd, registerCmd } from '../fsm-helpers.js';

const S = 1_000_000_000;

function strategy(over: Partial<UpdateStrategy> = {}): UpdateStrategy {
  return {
    Stagger: 0, MaxParallel: 1, HealthCheck: 'task_states', MinHealthyTime: S, HealthyDeadline: 30 * S,
    ProgressDeadline: 600 * S, Canary: 0, AutoRevert: false, AutoPromote: false, ...over,
  };
}

/** A store with a node, a job and a deployment-watcher wired to apply its writes. */
function setup(over: Partial<UpdateStrategy> = {}, timers: (fake: FakeClock) => Clock = (fake) => fake) {
  const store = new StateStore();
  const fsm = new Fsm(store);
  const clock = new FakeClock(NOW / 1e6);
  let index = 0;
  const apply = (c: Command): void => void fsm.apply(c, ++index);
  const node = mockNode();
  apply(nodeCmd(node));
  const base = mockJob();
  const job: Job = { ...base, TaskGroups: [{ ...base.TaskGroups[0]!, Count: 3, Update: strategy(over) }] };
  const evals: Evaluation[] = [];
  const reverted: Job[] = [];
  const watcher = new DeploymentWatcher({
    state: store,
    clock: timers(clock),
    updateStatus: async (u, e) => apply({ Type: 'DeploymentStatusUpdate', Update: u, Eval: e, Now: clock.now() * 1e6 }),
    promote: async (id, e) => apply({ Type: 'DeploymentPromote', DeploymentID: id, Groups: null, Eval: e, Now: clock.now() * 1e6 }),
    createEval: async (e) => void evals.push(e),
    revert: async (j) => void reverted.push(j),
    newEval: (j, id) => mockEval(j, { TriggeredBy: 'deployment-watcher', DeploymentID: id }),
    onError: (err) => assert.fail(String(err)),
  });

  /** Registers a version of the job and places `n` allocations of it in a new deployment. */
  const rollout = (env: string, n = 3, canary = false): { job: Job; d: Deployment; allocs: Allocation[] } => {
    const spec: Job = { ...job, TaskGroups: [{ ...job.TaskGroups[0]!, Tasks: [mockTask({ Env: { V: env } })] }] };
    apply(registerCmd(spec));
    const stored = store.jobById('default', 'web')!;
    const d = newDeployment(stored, `dep-${env}`);
    d.TaskGroups.web = newDeploymentState(stored.TaskGroups[0]!, stored.TaskGroups[0]!.Update!, clock.now());
    if (canary) d.TaskGroups.web.DesiredCanaries = n;
    const cmd = placeCmd(stored, node, n, {
      DeploymentID: d.ID,
      DeploymentStatus: canary ? { Healthy: null, Timestamp: '', Canary: true, ModifyIndex: 0 } : null,
    });
    apply({ ...cmd, Deployment: d });
    return { job: stored, d, allocs: cmd.AllocsUpdated };
  };

  const health = (allocs: Allocation[], healthy: boolean): void =>
    apply({
      Type: 'AllocClientUpdate',
      Allocs: allocs.map((a) => ({
        ID: a.ID, NodeID: a.NodeID, ClientStatus: 'running' as const, ClientDescription: '', TaskStates: {},
        DeploymentStatus: { Healthy: healthy, Timestamp: new Date(clock.now()).toISOString(), Canary: a.DeploymentStatus?.Canary ?? false, ModifyIndex: 0 },
      })),
      Evals: [],
      Now: clock.now() * 1e6,
    });

  return { store, clock, watcher, evals, reverted, rollout, health, apply };
}

test('placements and health are counted; all healthy → successful and the job version stable', async () => {
  const t = setup();
  const { d, allocs } = t.rollout('a');
  assert.equal(t.store.deploymentById(d.ID)?.TaskGroups.web?.PlacedAllocs, 3);
  await t.watcher.pass();
  assert.equal(t.evals.length, 0, 'nothing healthy yet');

  t.clock.advance(5_000);
  t.health(allocs.slice(0, 1), true);
  const afterOne = t.store.deploymentById(d.ID)!.TaskGroups.web!;
  assert.equal(afterOne.HealthyAllocs, 1);
  assert.equal(afterOne.RequireProgressBy, new Date(t.clock.now() + 600_000).toISOString(), 'progress deadline pushed');
  await t.watcher.pass();
  assert.equal(t.evals.length, 1, 'a healthy alloc continues the rollout');
  assert.equal(t.evals[0]!.TriggeredBy, 'deployment-watcher');
  assert.equal(t.evals[0]!.DeploymentID, d.ID);
  await t.watcher.pass();
  assert.equal(t.evals.length, 1, 'no new eval without new health');

  t.health(allocs.slice(1), true);
  await t.watcher.pass();
  const done = t.store.deploymentById(d.ID)!;
  assert.equal(done.Status, 'successful');
  assert.equal(done.StatusDescription, 'Deployment completed successfully');
  assert.equal(t.store.jobById('default', 'web')!.Stable, true);
  assert.equal(t.store.jobVersions('default', 'web').find((v) => v.Version === 0)!.Stable, true);
});

test('an unhealthy allocation fails the deployment with an eval', async () => {
  const t = setup();
  const { d, allocs } = t.rollout('a');
  t.health(allocs.slice(0, 1), false);
  assert.equal(t.store.deploymentById(d.ID)!.TaskGroups.web!.UnhealthyAllocs, 1);
  await t.watcher.pass();
  const failed = t.store.deploymentById(d.ID)!;
  assert.equal(failed.Status, 'failed');
  assert.equal(failed.StatusDescription, 'Failed due to unhealthy allocations');
  assert.ok(t.store.evals().some((e) => e.DeploymentID === d.ID), 'an eval winds the rollout down');
  assert.equal(t.reverted.length, 0);
  assert.equal(t.store.jobById('default', 'web')!.Stable, false);
});

test('auto_revert re-registers the last stable version when a deployment fails', async () => {
  const t = setup({ AutoRevert: true });
  const first = t.rollout('a');
  t.health(first.allocs, true);
  await t.watcher.pass();
  assert.equal(t.store.deploymentById(first.d.ID)!.Status, 'successful');

  const second = t.rollout('b');
  assert.equal(second.job.Version, 1);
  t.health(second.allocs.slice(0, 1), false);
  await t.watcher.pass();
  const failed = t.store.deploymentById(second.d.ID)!;
  assert.equal(failed.Status, 'failed');
  assert.equal(failed.StatusDescription, 'Failed due to unhealthy allocations - rolling back to job version 0');
  assert.equal(t.reverted.length, 1);
  assert.equal(t.reverted[0]!.Version, 0);
  assert.deepEqual(t.reverted[0]!.TaskGroups[0]!.Tasks[0]!.Env, { V: 'a' });
});

test('auto_revert without a stable version says so and reverts nothing', async () => {
  const t = setup({ AutoRevert: true });
  const { d, allocs } = t.rollout('a');
  t.health(allocs.slice(0, 1), false);
  await t.watcher.pass();
  assert.equal(t.store.deploymentById(d.ID)!.StatusDescription, 'Failed due to unhealthy allocations - no stable job version to auto revert to');
  assert.equal(t.reverted.length, 0);
});

test('the progress deadline fails a deployment that stops making progress (timer on the clock)', async () => {
  const t = setup({ ProgressDeadline: 60 * S });
  const { d, allocs } = t.rollout('a');
  t.watcher.start();
  await t.watcher.pass();
  t.clock.advance(30_000);
  t.health(allocs.slice(0, 1), true);
  await t.watcher.pass();
  t.clock.advance(59_000);
  await t.watcher.pass();
  assert.equal(t.store.deploymentById(d.ID)!.Status, 'running', 'health pushed the deadline');
  await t.clock.advanceAsync(2_000);
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
  const failed = t.store.deploymentById(d.ID)!;
  assert.equal(failed.Status, 'failed');
  assert.equal(failed.StatusDescription, 'Failed due to progress deadline');
  t.watcher.stop();
});

test('canaries: manual promotion needs healthy canaries; auto_promote promotes them', async () => {
  const t = setup();
  const { d, allocs } = t.rollout('a', 1, true);
  await t.watcher.pass();
  assert.equal(t.store.deploymentById(d.ID)!.StatusDescription, 'Deployment is running but requires manual promotion');
  assert.deepEqual(t.store.deploymentById(d.ID)!.TaskGroups.web!.PlacedCanaries, [allocs[0]!.ID]);
  const newEval = (j: Job, id: string) => mockEval(j, { DeploymentID: id });
  assert.throws(() => planDeploymentAction(t.store, d.ID, { Type: 'promote', All: true, Groups: [] }, NOW, newEval), /0\/1 healthy/);
  t.health(allocs, true);
  const plan = planDeploymentAction(t.store, d.ID, { Type: 'promote', All: true, Groups: [] }, NOW, newEval);
  t.apply(plan.command);
  assert.equal(t.store.deploymentById(d.ID)!.TaskGroups.web!.Promoted, true);
  assert.equal(t.store.deploymentById(d.ID)!.StatusDescription, 'Deployment is running');
  // A promoted canary is a canary no more (Nomad's promotion clears the flag).
  assert.equal(t.store.allocById(allocs[0]!.ID)!.DeploymentStatus!.Canary, false);
  assert.equal(t.store.allocById(allocs[0]!.ID)!.DeploymentStatus!.Healthy, true);

  const a = setup({ Canary: 1, AutoPromote: true });
  const r = a.rollout('a', 1, true);
  await a.watcher.pass();
  assert.equal(a.store.deploymentById(r.d.ID)!.StatusDescription, 'Deployment is running pending automatic promotion');
  a.health(r.allocs, true);
  await a.watcher.pass();
  assert.equal(a.store.deploymentById(r.d.ID)!.TaskGroups.web!.Promoted, true);
});

test('pause, resume and fail are refused on a terminal deployment', () => {
  const t = setup();
  const { d } = t.rollout('a');
  const newEval = (j: Job, id: string) => mockEval(j, { DeploymentID: id });
  // Unblock is for a multiregion deployment waiting on its peers: a no-op success on a live one
  // (Nomad CE), refused on a terminal or unknown one.
  assert.doesNotThrow(() => checkUnblock(t.store, d.ID));
  assert.throws(() => checkUnblock(t.store, 'nope'), /not found/);
  const pause = planDeploymentAction(t.store, d.ID, { Type: 'pause', Pause: true }, NOW, newEval);
  t.apply(pause.command);
  assert.equal(t.store.deploymentById(d.ID)!.Status, 'paused');
  t.apply(planDeploymentAction(t.store, d.ID, { Type: 'pause', Pause: false }, NOW, newEval).command);
  assert.equal(t.store.deploymentById(d.ID)!.Status, 'running');
  t.apply(planDeploymentAction(t.store, d.ID, { Type: 'fail' }, NOW, newEval).command);
  assert.equal(t.store.deploymentById(d.ID)!.StatusDescription, 'Deployment marked as failed');
  assert.throws(() => planDeploymentAction(t.store, d.ID, { Type: 'fail' }, NOW, newEval), /terminal deployment/);
  assert.throws(() => checkUnblock(t.store, d.ID), /can't unblock terminal deployment/);
  assert.throws(() => planDeploymentAction(t.store, 'nope', { Type: 'fail' }, NOW, newEval), /not found/);
});

test('allocations updated in place into a new deployment count there with their health', () => {
  const t = setup();
  const { job, allocs } = t.rollout('a');
  t.health(allocs, true);
  const d2 = newDeployment(job, 'dep-scale');
  d2.TaskGroups.web = newDeploymentState(job.TaskGroups[0]!, job.TaskGroups[0]!.Update!, t.clock.now());
  const moved = allocs.map((a) => ({ ...t.store.allocById(a.ID)!, Job: null, DeploymentID: d2.ID, DeploymentStatus: null }));
  t.apply({ ...placeCmd(job, mockNode(), 0), AllocsUpdated: moved, Deployment: d2 });
  const s = t.store.deploymentById(d2.ID)!.TaskGroups.web!;
  assert.equal(s.PlacedAllocs, 3);
  assert.equal(s.HealthyAllocs, 3, 'the stored health counts, not the scheduler copy');
  assert.equal(t.store.allocById(allocs[0]!.ID)!.DeploymentStatus?.Healthy, true);
});

test('a progress deadline past 2^31−1 ms fails the deployment at its time on the fake clock, not early with real timers', async () => {
  const t = setup({ ProgressDeadline: LONG_MS * 1e6 });
  const { d } = t.rollout('a');
  t.watcher.start();
  await t.watcher.pass();
  await t.clock.advanceAsync(LONG_MS - 1);
  assert.equal(t.store.deploymentById(d.ID)!.Status, 'running');
  await t.clock.advanceAsync(2);
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
  assert.equal(t.store.deploymentById(d.ID)!.StatusDescription, 'Failed due to progress deadline');
  t.watcher.stop();

  const real = setup({ ProgressDeadline: LONG_MS * 1e6 }, realTimersAt);
  const r = real.rollout('a');
  real.watcher.start();
  await real.watcher.pass();
  await pause(150);
  assert.equal(real.store.deploymentById(r.d.ID)!.Status, 'running', 'a 30-day progress deadline passed at once');
  real.watcher.stop();
});
