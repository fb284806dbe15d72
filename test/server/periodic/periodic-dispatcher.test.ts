import { describe, it, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Job } from '../../../src/structs/index.js';
import type { StateReader } from '../../../src/server/state/state-reader.js';
import { Table } from '../../../src/server/state/state-reader.js';
import { PeriodicDispatcher } from '../../../src/server/periodic/periodic-dispatcher.js';
import { forcePeriodicLaunch } from '../../../src/server/periodic/periodic-force.js';
import { Server } from '../../../src/server/server.js';
import { FakeClock } from '../../../src/time/clock.js';
import { mockJob, mockNode } from '../../mock/factories.js';
import { fakeSchedulerFactory } from '../fake-scheduler.js';

const T0 = Date.parse('2026-01-01T00:00:30Z');
const unix = (s: string) => Date.parse(s) / 1000;

function periodicJob(id: string, spec: string, over: Partial<Job> = {}): Job {
  const base = mockJob({ ID: id, Name: id, Type: 'batch' });
  return {
    ...base,
    TaskGroups: [{ ...base.TaskGroups[0]!, Count: 1 }],
    Periodic: { Enabled: true, Spec: spec, SpecType: 'cron', ProhibitOverlap: false, TimeZone: 'UTC' },
    Status: 'running',
    ...over,
  };
}

/** A StateReader over a plain list of jobs (only what the dispatcher reads). */
function fakeState(jobs: Job[]): StateReader {
  return {
    jobs: (ns: string, prefix = '') => jobs.filter((j) => (ns === '*' || j.Namespace === ns) && j.ID.startsWith(prefix)),
    jobById: (ns: string, id: string) => jobs.find((j) => j.Namespace === ns && j.ID === id),
  } as unknown as StateReader;
}

function setup(jobs: Job[]) {
  const clock = new FakeClock(T0);
  const launched: Job[] = [];
  const skipped: number[] = [];
  const errors: string[] = [];
  const d = new PeriodicDispatcher({
    clock,
    state: fakeState(jobs),
    launch: async (child) => {
      launched.push(child);
    },
    onSkip: (_job, at) => skipped.push(at),
    onError: (err, what) => errors.push(`${what}: ${(err as Error).message}`),
  });
  return { clock, d, launched, skipped, errors };
}

describe('PeriodicDispatcher', () => {
  it('launches a child at each cron time with ParentID set and no periodic block', async () => {
    const { clock, d, launched } = setup([periodicJob('report', '* * * * *')]);
    d.start();
    assert.equal(d.nextLaunch('default', 'report'), Date.parse('2026-01-01T00:01:00Z'));
    await clock.advanceAsync(29_000);
    assert.equal(launched.length, 0);
    await clock.advanceAsync(1_000);
    assert.equal(launched.length, 1);
    const child = launched[0]!;
    assert.equal(child.ID, `report/periodic-${unix('2026-01-01T00:01:00Z')}`);
    assert.equal(child.Name, child.ID);
    assert.equal(child.ParentID, 'report');
    assert.equal(child.Periodic, null);
    await clock.advanceAsync(120_000);
    assert.deepEqual(
      launched.map((j) => j.ID),
      [0, 1, 2].map((i) => `report/periodic-${unix('2026-01-01T00:01:00Z') + 60 * i}`),
    );
  });

  it('skips a launch while an earlier child is alive when prohibit_overlap is set', async () => {
    const parent = periodicJob('nightly', '* * * * *');
    parent.Periodic = { ...parent.Periodic!, ProhibitOverlap: true };
    const child: Job = { ...periodicJob(`nightly/periodic-${unix('2026-01-01T00:00:00Z')}`, ''), Periodic: null, ParentID: 'nightly', Status: 'running' };
    const jobs = [parent, child];
    const { clock, d, launched, skipped } = setup(jobs);
    d.start();
    await clock.advanceAsync(30_000);
    assert.equal(launched.length, 0);
    assert.equal(skipped.length, 1);
    child.Status = 'dead';
    await clock.advanceAsync(60_000);
    assert.deepEqual(launched.map((j) => j.ID), [`nightly/periodic-${unix('2026-01-01T00:02:00Z')}`]);
  });

  it('forgets a job that was disabled, stopped or deregistered', async () => {
    const jobs = [periodicJob('a', '* * * * *'), periodicJob('b', '* * * * *')];
    const { clock, d, launched } = setup(jobs);
    d.start();
    assert.equal(d.trackedCount(), 2);
    jobs[0] = { ...jobs[0]!, Periodic: { ...jobs[0]!.Periodic!, Enabled: false } };
    d.jobChanged('default', 'a');
    jobs.splice(1, 1);
    d.jobChanged('default', 'b');
    assert.equal(d.trackedCount(), 0);
    await clock.advanceAsync(120_000);
    assert.equal(launched.length, 0);
  });

  it('never launches a parameterized periodic parent', () => {
    const { d } = setup([periodicJob('p', '* * * * *', { ParameterizedJob: { Payload: 'optional', MetaRequired: null, MetaOptional: null } })]);
    d.start();
    assert.equal(d.trackedCount(), 0);
  });

  it('catches up a launch missed while no leader ran', async () => {
    // The newest child launched at 00:00:00; the 00:00:10 launch was missed (6-field spec: every 10 s).
    const parent = periodicJob('tick', '*/10 * * * * *');
    const old = { ...periodicJob(`tick/periodic-${unix('2026-01-01T00:00:00Z')}`, ''), Periodic: null, ParentID: 'tick', Status: 'dead' as const };
    const { clock, d, launched } = setup([parent, old]);
    d.start();
    await clock.advanceAsync(0);
    assert.equal(launched.length, 1);
    assert.equal(launched[0]!.ID, `tick/periodic-${T0 / 1000}`);
  });

  it('reports a spec it cannot parse instead of throwing', () => {
    const { d, errors } = setup([periodicJob('bad', '99 * * * *')]);
    d.start();
    assert.equal(d.trackedCount(), 0);
    assert.match(errors[0] ?? '', /periodic job "bad": minutes: 99 is out of range/);
  });

  it('stop() cancels every timer', async () => {
    const { clock, d, launched } = setup([periodicJob('x', '* * * * * *')]);
    d.start();
    d.stop();
    await clock.advanceAsync(10_000);
    assert.equal(launched.length, 0);
  });
});

describe('periodic jobs in the server', () => {
  const dirs: string[] = [];
  const servers: Server[] = [];
  afterEach(async () => {
    for (const s of servers.splice(0)) await s.close();
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  async function open(clock: FakeClock, dataDir: string): Promise<Server> {
    const s = await Server.open({ dataDir, clock, numWorkers: 1, schedulerFactory: () => fakeSchedulerFactory, gcIntervalMs: 0, heartbeat: { minTtlMs: 3_600_000 } });
    servers.push(s);
    return s;
  }

  async function until(s: Server, cond: () => boolean, what: string): Promise<void> {
    for (let i = 0; i < 200 && !cond(); i++) await s.waitForChange([Table.Jobs, Table.Evals, Table.JobSummaries], s.state.latestIndex(), 20);
    assert.ok(cond(), `timed out waiting for ${what}`);
  }

  it('registers the parent without an eval, launches children on schedule, counts them, and re-arms after a restart', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'caravan-periodic-'));
    dirs.push(dir);
    const clock = new FakeClock(T0);
    let s = await open(clock, dir);
    await s.registerNode(mockNode());
    const reg = await s.registerJob(periodicJob('report', '* * * * *', { Status: 'pending' }));
    assert.equal(reg.evalId, '');
    assert.equal(s.state.evalsByJob('default', 'report').length, 0);
    assert.equal(s.state.jobById('default', 'report')?.Status, 'running');

    await clock.advanceAsync(30_000);
    const childId = `report/periodic-${unix('2026-01-01T00:01:00Z')}`;
    await until(s, () => s.state.evalsByJob('default', childId).some((e) => e.Status === 'complete'), 'child scheduled');
    const child = s.state.jobById('default', childId)!;
    assert.equal(child.ParentID, 'report');
    await until(s, () => (s.state.jobSummary('default', 'report')?.Children?.Running ?? 0) === 1, 'children summary');

    const forced = await forcePeriodicLaunch(s, 'default', 'report', clock.now() + 5_000);
    assert.ok(forced.EvalID);
    assert.equal(s.state.jobById('default', forced.DispatchedJobID)?.ParentID, 'report');
    await assert.rejects(forcePeriodicLaunch(s, 'default', childId, clock.now()), /non-periodic/);

    await s.close();
    servers.splice(servers.indexOf(s), 1);
    s = await open(clock, dir);
    assert.equal(s.duties!.periodic.trackedCount(), 1);
    assert.equal(s.duties!.periodic.nextLaunch('default', 'report'), Date.parse('2026-01-01T00:02:00Z'));
  });

  it('rejects a periodic job with a bad cron field or time zone at registration, naming it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'caravan-periodic-'));
    dirs.push(dir);
    const s = await open(new FakeClock(T0), dir);
    await assert.rejects(s.registerJob(periodicJob('bad', '0 25 * * *')), /periodic: cron "0 25 \* \* \*": hours: 25 is out of range/);
    const tz = periodicJob('tz', '@daily');
    tz.Periodic = { ...tz.Periodic!, TimeZone: 'Nowhere/Land' };
    await assert.rejects(s.registerJob(tz), /time_zone: unknown time zone "Nowhere\/Land"/);
  });
});
