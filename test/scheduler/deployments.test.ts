import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mockEval, mockJob, mockNode, mockTask } from '../mock/factories.js';
import type { Allocation, Job, UpdateStrategy } from '../../src/structs/index.js';
import { SchedulerHarness, liveAllocs, planPlaced, planStopped } from './harness.js';

const S = 1_000_000_000;

function update(overrides: Partial<UpdateStrategy> = {}): UpdateStrategy {
  return {
    Stagger: 30 * S, MaxParallel: 1, HealthCheck: 'task_states', MinHealthyTime: 10 * S, HealthyDeadline: 300 * S,
    ProgressDeadline: 600 * S, Canary: 0, AutoRevert: false, AutoPromote: false, ...overrides,
  };
}

function rollingJob(count: number, u: Partial<UpdateStrategy> = {}): Job {
  const job = mockJob();
  return { ...job, TaskGroups: [{ ...job.TaskGroups[0]!, Count: count, Update: update(u) }] };
}

function cluster(n: number): SchedulerHarness {
  const h = new SchedulerHarness();
  for (let i = 0; i < n; i++) h.state.upsertNode(mockNode({ ID: `node-${String(i).padStart(3, '0')}` }));
  return h;
}

async function register(h: SchedulerHarness, job: Job): Promise<void> {
  h.state.upsertJob(job);
  await h.process(mockEval(job));
}

/** A new version of the job with a changed env (a destructive update). */
function nextVersion(job: Job, env: string): Job {
  return { ...job, Version: job.Version + 1, TaskGroups: [{ ...job.TaskGroups[0]!, Tasks: [mockTask({ Env: { V: env } })] }] };
}

/** Marks live allocations of the job running and (un)healthy, as a client would report. */
function report(h: SchedulerHarness, allocs: Allocation[], healthy: boolean): void {
  for (const a of allocs) {
    const cur = h.state.allocById(a.ID)!;
    h.state.upsertAlloc({ ...cur, ClientStatus: 'running', DeploymentStatus: { Healthy: healthy, Timestamp: 'now', Canary: cur.DeploymentStatus?.Canary ?? false, ModifyIndex: 0 } });
  }
}

function ofVersion(h: SchedulerHarness, version: number): Allocation[] {
  return liveAllocs(h, 'web').filter((a) => a.Job?.Version === version);
}

test('a first version creates a running deployment and places every allocation in it', async () => {
  const h = cluster(5);
  await register(h, rollingJob(3));
  const plan = h.lastPlan();
  const d = plan.Deployment!;
  assert.ok(d, 'the plan carries a deployment');
  assert.equal(d.Status, 'running');
  assert.equal(d.JobVersion, 0);
  assert.equal(d.TaskGroups.web?.DesiredTotal, 3);
  assert.equal(d.TaskGroups.web?.DesiredCanaries, 0);
  assert.equal(d.TaskGroups.web?.ProgressDeadline, 600 * S);
  assert.equal(d.TaskGroups.web?.RequireProgressBy, new Date(h.now + 600_000).toISOString());
  const placed = planPlaced(plan);
  assert.equal(placed.length, 3);
  for (const a of placed) assert.equal(a.DeploymentID, d.ID);
});

test('rolling update with max_parallel 1 of count 3 replaces one allocation per healthy step', async () => {
  const h = cluster(5);
  const v0 = rollingJob(3);
  await register(h, v0);
  report(h, liveAllocs(h, 'web'), true);
  h.state.upsertDeployment({ ...h.state.latestDeploymentByJob('default', 'web')!, Status: 'successful' });

  const v1 = nextVersion(v0, 'one');
  await register(h, v1);
  let plan = h.lastPlan();
  const d = plan.Deployment!;
  assert.equal(d.JobVersion, 1);
  assert.equal(planStopped(plan).length, 1, 'one old alloc stopped');
  assert.equal(planPlaced(plan).length, 1, 'one new alloc placed');
  assert.equal(planPlaced(plan)[0]!.DeploymentID, d.ID);
  assert.equal(plan.Annotations!.DesiredTGUpdates.web!.DestructiveUpdate, 1);
  assert.equal(plan.Annotations!.DesiredTGUpdates.web!.Ignore, 2);

  // Until the new allocation is healthy, nothing more is replaced.
  await h.process(mockEval(v1));
  assert.equal(ofVersion(h, 0).length, 2);
  assert.equal(ofVersion(h, 1).length, 1);

  for (let step = 2; step <= 3; step++) {
    report(h, ofVersion(h, 1), true);
    await h.process(mockEval(v1, { TriggeredBy: 'deployment-watcher' }));
    plan = h.lastPlan();
    assert.equal(planStopped(plan).length, 1, `step ${step}: one stop`);
    assert.equal(ofVersion(h, 1).length, step);
    assert.equal(ofVersion(h, 0).length, 3 - step);
    assert.equal(plan.Deployment, null, 'the same deployment continues');
  }
  assert.equal(liveAllocs(h, 'web').length, 3);
  for (const a of ofVersion(h, 1)) assert.equal(a.DeploymentID, d.ID);
});

test('an unhealthy allocation or a paused deployment stops the rollout', async () => {
  const h = cluster(5);
  const v0 = rollingJob(3, { MaxParallel: 2 });
  await register(h, v0);
  report(h, liveAllocs(h, 'web'), true);
  h.state.upsertDeployment({ ...h.state.latestDeploymentByJob('default', 'web')!, Status: 'successful' });
  const v1 = nextVersion(v0, 'one');
  await register(h, v1);
  assert.equal(ofVersion(h, 1).length, 2);
  report(h, ofVersion(h, 1).slice(0, 1), false);
  report(h, ofVersion(h, 1).slice(1), true);
  const before = h.plans.length;
  await h.process(mockEval(v1));
  assert.equal(ofVersion(h, 0).length, 1, 'an unhealthy alloc holds the rollout');
  assert.ok(h.plans.length === before || planStopped(h.lastPlan()).length === 0);

  const d = h.state.latestDeploymentByJob('default', 'web')!;
  h.state.upsertDeployment({ ...d, Status: 'paused' });
  report(h, ofVersion(h, 1), true);
  await h.process(mockEval(v1));
  assert.equal(ofVersion(h, 0).length, 1, 'a paused deployment holds the rollout');
});

test('a newer version cancels the active deployment of the older one', async () => {
  const h = cluster(5);
  const v0 = rollingJob(2);
  await register(h, v0);
  const d0 = h.state.latestDeploymentByJob('default', 'web')!;
  await register(h, nextVersion(v0, 'one'));
  const plan = h.lastPlan();
  assert.deepEqual(plan.DeploymentUpdates, [{ DeploymentID: d0.ID, Status: 'cancelled', StatusDescription: 'Cancelled due to newer version of job' }]);
  assert.notEqual(plan.Deployment?.ID, d0.ID);
});

test('canaries are placed beside the old allocations; promotion rolls out the rest', async () => {
  const h = cluster(6);
  const v0 = rollingJob(3, { Canary: 1 });
  await register(h, v0);
  report(h, liveAllocs(h, 'web'), true);
  h.state.upsertDeployment({ ...h.state.latestDeploymentByJob('default', 'web')!, Status: 'successful' });

  const v1 = nextVersion(v0, 'one');
  await register(h, v1);
  let plan = h.lastPlan();
  const d = plan.Deployment!;
  assert.equal(d.TaskGroups.web?.DesiredCanaries, 1);
  assert.equal(planStopped(plan).length, 0, 'old allocations stay');
  const canary = planPlaced(plan);
  assert.equal(canary.length, 1);
  assert.equal(canary[0]!.DeploymentStatus?.Canary, true);
  // Not yet healthy: Go's zero time, as Nomad (an empty string breaks Go clients' whole list).
  assert.equal(canary[0]!.DeploymentStatus?.Timestamp, '0001-01-01T00:00:00Z');
  assert.equal(canary[0]!.PreviousAllocation, '');
  assert.equal(plan.Annotations!.DesiredTGUpdates.web!.Canary, 1);

  // A healthy canary without promotion: still nothing replaced, no second canary.
  report(h, canary, true);
  await h.process(mockEval(v1));
  assert.equal(ofVersion(h, 0).length, 3);
  assert.equal(ofVersion(h, 1).length, 1);

  // Promote: the canary takes its index's place, then one more is replaced (max_parallel 1).
  const cur = h.state.latestDeploymentByJob('default', 'web')!;
  h.state.upsertDeployment({ ...cur, TaskGroups: { web: { ...cur.TaskGroups.web!, Promoted: true } } });
  await h.process(mockEval(v1));
  plan = h.lastPlan();
  assert.equal(ofVersion(h, 0).length, 1);
  assert.equal(ofVersion(h, 1).length, 2);
  const names = liveAllocs(h, 'web').map((a) => a.Name).sort();
  assert.deepEqual(names, ['web.web[0]', 'web.web[1]', 'web.web[2]']);
  report(h, ofVersion(h, 1), true);
  await h.process(mockEval(v1));
  assert.equal(ofVersion(h, 0).length, 0);
  assert.equal(ofVersion(h, 1).length, 3);
});

test('a stopped canary is replaced by a new one; the canaries of a failed deployment are stopped', async () => {
  const h = cluster(6);
  const v0 = rollingJob(3, { Canary: 1 });
  await register(h, v0);
  report(h, liveAllocs(h, 'web'), true);
  h.state.upsertDeployment({ ...h.state.latestDeploymentByJob('default', 'web')!, Status: 'successful' });
  const v1 = nextVersion(v0, 'one');
  await register(h, v1);
  const [canary] = planPlaced(h.lastPlan());
  assert.ok(canary);

  // The user stops the canary (alloc stop marks it for migration): it goes and another takes its place.
  h.state.upsertAlloc({ ...h.state.allocById(canary.ID)!, DesiredTransition: { Migrate: true } });
  await h.process(mockEval(v1));
  let plan = h.lastPlan();
  assert.deepEqual(planStopped(plan).map((a) => a.ID), [canary.ID]);
  const [second] = planPlaced(plan);
  assert.equal(second?.DeploymentStatus?.Canary, true);
  assert.equal(ofVersion(h, 0).length, 3, 'the old allocations keep running');

  // The deployment fails: its unpromoted canary is stopped, the old version keeps serving.
  const cur = h.state.latestDeploymentByJob('default', 'web')!;
  h.state.upsertDeployment({ ...cur, Status: 'failed' });
  await h.process(mockEval(v1));
  plan = h.lastPlan();
  assert.deepEqual(planStopped(plan).map((a) => a.ID), [second!.ID]);
  assert.equal(planPlaced(plan).length, 0);
  assert.equal(ofVersion(h, 1).length, 0);
  assert.equal(ofVersion(h, 0).length, 3);
});

test('groups without an update strategy replace everything at once and create no deployment', async () => {
  const h = cluster(5);
  const job = mockJob();
  const v0 = { ...job, TaskGroups: [{ ...job.TaskGroups[0]!, Count: 3, Update: null }] };
  await register(h, v0);
  assert.equal(h.lastPlan().Deployment, null);
  await register(h, nextVersion(v0, 'one'));
  assert.equal(planStopped(h.lastPlan()).length, 3);
  assert.equal(h.lastPlan().Deployment, null);
});

test('a scale-up updates the running allocations in place into the new deployment', async () => {
  const h = cluster(6);
  const v0 = rollingJob(3);
  await register(h, v0);
  report(h, liveAllocs(h, 'web'), true);
  h.state.upsertDeployment({ ...h.state.latestDeploymentByJob('default', 'web')!, Status: 'successful' });
  const v1: Job = { ...v0, Version: 1, TaskGroups: [{ ...v0.TaskGroups[0]!, Count: 5 }] };
  await register(h, v1);
  const plan = h.lastPlan();
  const d = plan.Deployment!;
  assert.equal(d.TaskGroups.web?.DesiredTotal, 5);
  assert.equal(plan.Annotations!.DesiredTGUpdates.web!.InPlaceUpdate, 3);
  assert.equal(plan.Annotations!.DesiredTGUpdates.web!.Place, 2);
  for (const a of planPlaced(plan)) assert.equal(a.DeploymentID, d.ID);
  assert.equal(planStopped(plan).length, 0);
});
