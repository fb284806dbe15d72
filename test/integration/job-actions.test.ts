import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { Job } from '../../src/structs/index.js';
import { mockNode } from '../mock/factories.js';
import { api, startAgent } from './helpers/agent-process.js';
import { sleepJobHcl } from './helpers/sleep-job.js';

const hcl = (id: string, env: string, count = 1): string => sleepJobHcl(id, { env, count });

async function register(address: string, text: string): Promise<void> {
  const parsed = await api<Record<string, unknown>>(address, 'POST', '/v1/jobs/parse', { JobHCL: text, Canonicalize: true });
  assert.equal(parsed.status, 200, parsed.text);
  const res = await api(address, 'PUT', '/v1/jobs', { Job: parsed.body });
  assert.equal(res.status, 200, res.text);
}

const job = async (address: string, id: string) => (await api<Job>(address, 'GET', `/v1/job/${id}`)).body;

test('job revert, stable, scale and /v1/jobs/statuses through a real agent', async () => {
  const agent = await startAgent({ roleArgs: ['-server'], minHeartbeatTtl: '1h' });
  try {
    const a = agent.address;
    const node = mockNode({ ID: randomUUID(), Name: 'n1', Status: 'ready' });
    assert.equal((await api(a, 'PUT', '/v1/internal/node/register', { Node: node })).status, 200);
    await register(a, hcl('web', 'one'));
    await register(a, hcl('web', 'two'));
    assert.equal((await job(a, 'web')).Version, 1);

    // stable: marks a version, makes none.
    const stable = await api<{ Index: number }>(a, 'PUT', '/v1/job/web/stable', { JobID: 'web', JobVersion: 0, Stable: true });
    assert.equal(stable.status, 200, stable.text);
    assert.ok(stable.body.Index > 0);
    const versions = (await api<{ Versions: Job[] }>(a, 'GET', '/v1/job/web/versions')).body.Versions;
    assert.equal(versions.find((v) => v.Version === 0)?.Stable, true);
    assert.equal((await job(a, 'web')).Version, 1);
    const badStable = await api(a, 'PUT', '/v1/job/web/stable', { JobVersion: 9, Stable: true });
    assert.equal(badStable.status, 404);
    assert.match(badStable.text, /at version 9 not found/);
    assert.equal((await api(a, 'PUT', '/v1/job/web/stable', { Stable: true })).status, 400);

    // revert: version 0's spec comes back as version 2, with an evaluation.
    const wrongPrior = await api(a, 'PUT', '/v1/job/web/revert', { JobID: 'web', JobVersion: 0, EnforcePriorVersion: 5 });
    assert.equal(wrongPrior.status, 400);
    assert.match(wrongPrior.text, /enforcing version 5/);
    const toCurrent = await api(a, 'PUT', '/v1/job/web/revert', { JobVersion: 1 });
    assert.equal(toCurrent.status, 400);
    assert.match(toCurrent.text, /can't revert to current version/);
    assert.equal((await api(a, 'PUT', '/v1/job/web/revert', { JobVersion: 7 })).status, 404);
    assert.equal((await job(a, 'web')).Version, 1, 'failed reverts change nothing');
    const revert = await api<{ EvalID: string; JobModifyIndex: number }>(a, 'PUT', '/v1/job/web/revert', { JobID: 'web', JobVersion: 0, EnforcePriorVersion: 1 });
    assert.equal(revert.status, 200, revert.text);
    assert.ok(revert.body.EvalID);
    const reverted = await job(a, 'web');
    assert.equal(reverted.Version, 2);
    assert.equal(reverted.TaskGroups[0]!.Tasks[0]!.Env?.['V'], 'one');

    // scale: a new version with the group's count, or a 400 naming the problem and no change.
    for (const [body, want] of [
      [{ Count: -1, Target: { Group: 'g' } }, /Count must be a non-negative integer/],
      [{ Count: 2, Target: { Group: 'nope' } }, /task group "nope" specified for scaling does not exist/],
      [{ Count: 2 }, /Target must be an object/],
    ] as const) {
      const bad = await api(a, 'PUT', '/v1/job/web/scale', body);
      assert.equal(bad.status, 400, JSON.stringify(body));
      assert.match(bad.text, want);
    }
    assert.equal((await job(a, 'web')).Version, 2);
    const scale = await api<{ EvalID: string }>(a, 'PUT', '/v1/job/web/scale', { Count: 3, Target: { Group: 'g', Job: 'web' }, Message: 'more' });
    assert.equal(scale.status, 200, scale.text);
    assert.ok(scale.body.EvalID);
    const scaled = await job(a, 'web');
    assert.equal(scaled.TaskGroups[0]!.Count, 3);
    assert.equal(scaled.Version, 3);
    // A request without Count records an event only: no new version.
    const report = await api<{ EvalID: string }>(a, 'PUT', '/v1/job/web/scale', { Target: { Group: 'g' }, Message: 'autoscaler: no change', Error: true, Meta: { policy: 'p1' } });
    assert.equal(report.status, 200, report.text);
    assert.equal(report.body.EvalID, '');
    assert.equal((await job(a, 'web')).Version, 3);
    type Ev = { Count: number | null; PreviousCount: number; Message: string; Error: boolean; EvalID: string | null; Meta: Record<string, string> | null };
    const status = await api<{ TaskGroups: Record<string, { Desired: number; Events: Ev[] }> }>(a, 'GET', '/v1/job/web/scale');
    assert.equal(status.body.TaskGroups['g']!.Desired, 3);
    const events = status.body.TaskGroups['g']!.Events;
    assert.equal(events.length, 2);
    assert.deepEqual([events[0]!.Count, events[0]!.Message, events[0]!.Error, events[0]!.EvalID, events[0]!.Meta], [null, 'autoscaler: no change', true, null, { policy: 'p1' }]);
    assert.deepEqual([events[1]!.Count, events[1]!.PreviousCount, events[1]!.Message, events[1]!.EvalID], [3, 1, 'more', scale.body.EvalID]);

    // Sub-routes never fall through to the job-ID route.
    const getRevert = await api(a, 'GET', '/v1/job/web/revert');
    assert.equal(getRevert.status, 405);

    // /v1/jobs/statuses: the UI's list, GET and POST, with the shared filter.
    await register(a, hcl('other', 'x'));
    const deadline = Date.now() + 10_000;
    let statuses: { ID: string; GroupCountSum: number; Allocs: { Group: string; NodeID: string }[]; Version: number; LatestDeployment: unknown }[] = [];
    while (Date.now() < deadline) {
      statuses = (await api<typeof statuses>(a, 'GET', '/v1/jobs/statuses')).body;
      if ((statuses.find((s) => s.ID === 'web')?.Allocs.length ?? 0) >= 3) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.deepEqual(statuses.map((s) => s.ID).sort(), ['other', 'web']);
    const web = statuses.find((s) => s.ID === 'web')!;
    assert.equal(web.GroupCountSum, 3);
    assert.equal(web.Version, 3);
    assert.ok(web.Allocs.length >= 3, JSON.stringify(web.Allocs));
    assert.ok(web.Allocs.every((al) => al.Group === 'g' && al.NodeID === node.ID));
    const posted = await api<{ ID: string }[]>(a, 'POST', '/v1/jobs/statuses', { Jobs: [{ ID: 'other', Namespace: 'default' }] });
    assert.deepEqual(posted.body.map((s) => s.ID), ['other']);
    const filtered = await api<{ ID: string }[]>(a, 'GET', `/v1/jobs/statuses?filter=${encodeURIComponent('TaskGroups.Tasks.Env.V == "x"')}`);
    assert.deepEqual(filtered.body.map((s) => s.ID), ['other']);
    const paged = await fetch(`${a}/v1/jobs/statuses?per_page=1`);
    assert.equal(paged.headers.get('x-nomad-nexttoken'), 'web');
    assert.equal((await api(a, 'GET', `/v1/jobs/statuses?filter=${encodeURIComponent('ID ==')}`)).status, 400);
  } finally {
    await agent.stop();
    await agent.cleanup();
  }
});
