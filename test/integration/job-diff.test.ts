import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { JobDiff } from '../../src/structs/job-diff/index.js';
import { mockNode } from '../mock/factories.js';
import { api, runCli, startAgent } from './helpers/agent-process.js';
import { sleepJobHcl } from './helpers/sleep-job.js';
import { waitFor } from './helpers/client-agent.js';

interface PlanAnswer {
  Diff: JobDiff | null;
  JobModifyIndex: number;
}

test('job plan and job history -p show Nomad-shaped, annotated diffs through a real agent', async () => {
  const agent = await startAgent({ roleArgs: ['-server'], minHeartbeatTtl: '1h' });
  const dir = await mkdtemp(join(tmpdir(), 'caravan-diff-'));
  try {
    const a = agent.address;
    assert.equal((await api(a, 'PUT', '/v1/internal/node/register', { Node: mockNode({ ID: randomUUID(), Status: 'ready' }) })).status, 200);
    const parse = async (hcl: string) => (await api<Record<string, unknown>>(a, 'POST', '/v1/jobs/parse', { JobHCL: hcl, Canonicalize: true })).body;
    const v0 = await parse(sleepJobHcl('web', { count: 1, env: 'one' }));
    const v1 = await parse(sleepJobHcl('web', { count: 3, env: 'two' }));

    // A job not yet registered plans as Added, its task as "forces create".
    const fresh = await api<PlanAnswer>(a, 'PUT', '/v1/job/web/plan', { Job: v0, Diff: true });
    assert.equal(fresh.status, 200, fresh.text);
    assert.equal(fresh.body.Diff?.Type, 'Added');
    assert.deepEqual(fresh.body.Diff?.TaskGroups?.[0]?.Updates, { create: 1 });
    assert.deepEqual(fresh.body.Diff?.TaskGroups?.[0]?.Tasks?.[0]?.Annotations, ['forces create']);
    // Without Diff the answer has none.
    assert.equal((await api<PlanAnswer>(a, 'PUT', '/v1/job/web/plan', { Job: v0 })).body.Diff, null);

    assert.equal((await api(a, 'PUT', '/v1/jobs', { Job: v0 })).status, 200);
    // The plan's counts depend on the first version's allocation being placed.
    await waitFor('the first version placed', async () => ((await api<unknown[]>(a, 'GET', '/v1/job/web/allocations')).body.length === 1 ? true : undefined));

    const edit = await api<PlanAnswer>(a, 'PUT', '/v1/job/web/plan', { Job: v1, Diff: true });
    const group = edit.body.Diff!.TaskGroups![0]!;
    assert.equal(edit.body.Diff?.Type, 'Edited');
    assert.deepEqual(group.Fields?.find((f) => f.Name === 'Count'), { Type: 'Edited', Name: 'Count', Old: '1', New: '3', Annotations: ['forces create'] });
    const task = group.Tasks![0]!;
    assert.deepEqual(task.Fields, [{ Type: 'Edited', Name: 'Env[V]', Old: 'one', New: 'two', Annotations: null }]);
    assert.deepEqual(task.Annotations, ['forces create/destroy update']);
    assert.deepEqual(group.Updates, { create: 2, 'create/destroy update': 1 });

    // The CLI prints it as Nomad's does and exits 1: allocations would change.
    const file = join(dir, 'web.hcl');
    await writeFile(file, sleepJobHcl('web', { count: 3, env: 'two' }));
    const plan = await runCli(a, ['job', 'plan', file]);
    assert.equal(plan.code, 1, plan.stderr);
    assert.ok(
      plan.stdout.startsWith(
        [
          '+/- Job: "web"',
          '+/- Task Group: "g" (2 create, 1 create/destroy update)',
          '  +/- Count: "1" => "3" (forces create)',
          '  +/- Task: "t" (forces create/destroy update)',
          '    +/- Env[V]: "one" => "two"',
          '',
          'Scheduler dry-run:',
        ].join('\n'),
      ),
      plan.stdout,
    );
    assert.match(plan.stdout, /Job Modify Index: \d+/);
    const noDiff = await runCli(a, ['job', 'plan', '-diff=false', file]);
    assert.ok(noDiff.stdout.startsWith('Scheduler dry-run:'), noDiff.stdout);

    // Unchanged: every allocation ignored, exit 0.
    await writeFile(file, sleepJobHcl('web', { count: 1, env: 'one' }));
    const same = await runCli(a, ['job', 'plan', file]);
    assert.equal(same.code, 0, same.stdout + same.stderr);
    assert.ok(same.stdout.startsWith('Job: "web"\nTask Group: "g" (1 ignore)\n  Task: "t"\n\nScheduler dry-run:'), same.stdout);

    // Versions: one diff per version against the one before it, newest first.
    assert.equal((await api(a, 'PUT', '/v1/jobs', { Job: v1 })).status, 200);
    const versions = await api<{ Versions: { Version: number }[]; Diffs: JobDiff[] | null }>(a, 'GET', '/v1/job/web/versions?diffs=true');
    assert.deepEqual(versions.body.Versions.map((v) => v.Version), [1, 0]);
    assert.equal(versions.body.Diffs?.length, 1);
    assert.equal(versions.body.Diffs?.[0]?.TaskGroups?.[0]?.Fields?.find((f) => f.Name === 'Count')?.New, '3');
    assert.equal((await api<{ Diffs: unknown }>(a, 'GET', '/v1/job/web/versions')).body.Diffs, null);
    const against0 = await api<{ Diffs: JobDiff[] }>(a, 'GET', '/v1/job/web/versions?diffs=true&diff_version=0');
    assert.deepEqual(against0.body.Diffs.map((d) => d.Type), ['Edited', 'None']);
    assert.equal((await api(a, 'GET', '/v1/job/web/versions?diffs=true&diff_version=9')).status, 404);
    assert.equal((await api(a, 'GET', '/v1/job/web/versions?diffs=true&diff_version=x')).status, 400);

    const history = await runCli(a, ['job', 'history', '-p', 'web']);
    assert.equal(history.code, 0, history.stderr);
    assert.match(history.stdout, /Version\s+= 1\n[\s\S]*Diff\s+=\s*\n\+\/- Job: "web"\n\+\/- Task Group: "g"\n {2}\+\/- Count: "1" => "3"\n {2}\+\/- Task: "t"\n {4}\+\/- Env\[V\]: "one" => "two"\n\nVersion\s+= 0/);
  } finally {
    await rm(dir, { recursive: true, force: true });
    await agent.stop();
    await agent.cleanup();
  }
});
