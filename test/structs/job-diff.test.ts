import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseJobspec } from '../../src/jobspec/index.js';
import { canonicalizeJob } from '../../src/structs/job-defaults.js';
import type { Job } from '../../src/structs/job.js';
import type { DesiredUpdates } from '../../src/structs/plan.js';
import { annotateJobDiff, diffJob, type JobDiff, type ObjectDiff } from '../../src/structs/job-diff/index.js';
import { formatJobDiff } from '../../src/cli/format/job-diff-text.js';

interface Spec {
  count?: number;
  args?: string;
  team?: string;
  env?: string;
  constraint?: boolean;
  killTimeout?: string;
  extraGroup?: boolean;
  datacenters?: string;
  tags?: string;
}

async function job(spec: Spec = {}): Promise<Job> {
  const hcl = `job "web" {
  datacenters = [${spec.datacenters ?? '"dc1"'}]
  meta {
    team = "${spec.team ?? 'a'}"
  }
  ${spec.constraint ? 'constraint {\n    attribute = "${attr.kernel.name}"\n    value = "linux"\n  }' : ''}
  group "api" {
    count = ${spec.count ?? 1}
    task "server" {
      driver = "raw_exec"
      ${spec.killTimeout ? `kill_timeout = "${spec.killTimeout}"` : ''}
      config {
        command = "/bin/sleep"
        args = ["${spec.args ?? '300'}"]
      }
      env {
        A = "${spec.env ?? '1'}"
      }
      service {
        name = "web"
        provider = "nomad"
        tags = [${spec.tags ?? '"v1"'}]
      }
    }
  }
  ${spec.extraGroup ? 'group "cache" {\n    task "redis" {\n      driver = "raw_exec"\n      config {\n        command = "/bin/sleep"\n      }\n    }\n  }' : ''}
}`;
  return canonicalizeJob(await parseJobspec(hcl));
}

function updates(partial: Partial<DesiredUpdates>): DesiredUpdates {
  return { Ignore: 0, Place: 0, Migrate: 0, Stop: 0, InPlaceUpdate: 0, DestructiveUpdate: 0, Canary: 0, Preemptions: 0, ...partial };
}

function object(diff: { Objects: ObjectDiff[] | null }, name: string): ObjectDiff | undefined {
  return diff.Objects?.find((o) => o.Name === name);
}

test('identical jobs diff to None everywhere, with nothing listed', async () => {
  const d = diffJob(await job(), await job(), true);
  assert.equal(d.Type, 'None');
  assert.equal(d.Fields, null);
  assert.equal(d.Objects, null);
  assert.equal(d.TaskGroups?.[0]?.Type, 'None');
  assert.equal(d.TaskGroups?.[0]?.Tasks?.[0]?.Type, 'None');
  assert.equal(d.TaskGroups?.[0]?.Tasks?.[0]?.Objects, null);
});

test('bookkeeping fields (version, indexes, status, submit time) are not differences', async () => {
  const a = await job();
  const b = { ...a, Version: 4, ModifyIndex: 99, JobModifyIndex: 98, CreateIndex: 7, Status: 'running' as const, SubmitTime: 123, Stable: true };
  assert.equal(diffJob(a, b, false).Type, 'None');
});

test('a new job is Added down to its tasks; a removed one Deleted', async () => {
  const added = diffJob(null, await job(), false);
  assert.equal(added.Type, 'Added');
  assert.equal(added.ID, 'web');
  assert.ok(added.Fields?.some((f) => f.Name === 'Type' && f.Type === 'Added' && f.New === 'service'));
  assert.equal(added.TaskGroups?.[0]?.Type, 'Added');
  assert.equal(added.TaskGroups?.[0]?.Tasks?.[0]?.Type, 'Added');
  const deleted = diffJob(await job(), null, false);
  assert.equal(deleted.Type, 'Deleted');
  assert.equal(deleted.TaskGroups?.[0]?.Type, 'Deleted');
});

test('job meta, group count, task env and driver config edits are fields and objects with old and new values', async () => {
  const d = diffJob(await job(), await job({ team: 'b', count: 3, env: '2', args: '600' }), false);
  assert.equal(d.Type, 'Edited');
  assert.deepEqual(d.Fields, [{ Type: 'Edited', Name: 'Meta[team]', Old: 'a', New: 'b', Annotations: null }]);
  const group = d.TaskGroups![0]!;
  assert.equal(group.Type, 'Edited');
  assert.deepEqual(group.Fields, [{ Type: 'Edited', Name: 'Count', Old: '1', New: '3', Annotations: null }]);
  const task = group.Tasks![0]!;
  assert.equal(task.Type, 'Edited');
  assert.deepEqual(task.Fields, [{ Type: 'Edited', Name: 'Env[A]', Old: '1', New: '2', Annotations: null }]);
  assert.deepEqual(object(task, 'Config'), {
    Type: 'Edited',
    Name: 'Config',
    Fields: [{ Type: 'Edited', Name: 'args[0]', Old: '300', New: '600', Annotations: null }],
    Objects: null,
  });
});

test('contextual diffs keep the unchanged fields of a changed object, as job plan shows them', async () => {
  const d = diffJob(await job(), await job({ args: '600' }), true);
  const config = object(d.TaskGroups![0]!.Tasks![0]!, 'Config')!;
  assert.deepEqual(
    config.Fields?.map((f) => [f.Type, f.Name]),
    [['Edited', 'args[0]'], ['None', 'command']],
  );
});

test('constraints, datacenters and service tags are compared as sets', async () => {
  const d = diffJob(await job(), await job({ constraint: true, datacenters: '"dc1", "dc2"', tags: '"v2"' }), false);
  const constraint = object(d, 'Constraint')!;
  assert.equal(constraint.Type, 'Added');
  assert.ok(constraint.Fields?.some((f) => f.Name === 'RTarget' && f.New === 'linux'));
  assert.deepEqual(object(d, 'Datacenters'), {
    Type: 'Added',
    Name: 'Datacenters',
    Fields: [{ Type: 'Added', Name: 'Datacenters', Old: '', New: 'dc2', Annotations: null }],
    Objects: null,
  });
  const service = object(d.TaskGroups![0]!.Tasks![0]!, 'Service')!;
  assert.equal(service.Type, 'Edited');
  assert.deepEqual(
    object(service, 'Tags')?.Fields?.map((f) => [f.Type, f.Old, f.New]),
    [['Added', '', 'v2'], ['Deleted', 'v1', '']],
  );
});

test('an added group is Added with its tasks; groups and tasks are sorted by name', async () => {
  const d = diffJob(await job(), await job({ extraGroup: true }), false);
  assert.deepEqual(d.TaskGroups?.map((g) => [g.Name, g.Type]), [['api', 'None'], ['cache', 'Added']]);
});

test('jobs with different IDs cannot be diffed', async () => {
  const other = { ...(await job()), ID: 'other' };
  const web = await job();
  assert.throws(() => diffJob(web, other, false), /different IDs/);
});

test('annotations: update counts per group, count changes, and in-place vs destructive task changes', async () => {
  const destructive = diffJob(await job(), await job({ count: 3, args: '600' }), true);
  annotateJobDiff(destructive, { api: updates({ Place: 2, DestructiveUpdate: 1 }) });
  const group = destructive.TaskGroups![0]!;
  assert.deepEqual(group.Updates, { create: 2, 'create/destroy update': 1 });
  assert.deepEqual(group.Fields?.find((f) => f.Name === 'Count')?.Annotations, ['forces create']);
  assert.deepEqual(group.Tasks![0]!.Annotations, ['forces create/destroy update']);

  const smaller = diffJob(await job({ count: 3 }), await job({ count: 1 }), true);
  annotateJobDiff(smaller, { api: updates({ Stop: 2, Ignore: 1 }) });
  assert.deepEqual(smaller.TaskGroups![0]!.Fields?.find((f) => f.Name === 'Count')?.Annotations, ['forces destroy']);
  assert.deepEqual(smaller.TaskGroups![0]!.Updates, { destroy: 2, ignore: 1 });

  const inPlace = diffJob(await job(), await job({ killTimeout: '20s', tags: '"v2"' }), true);
  annotateJobDiff(inPlace, { api: updates({ InPlaceUpdate: 1 }) });
  assert.deepEqual(inPlace.TaskGroups![0]!.Tasks![0]!.Annotations, ['forces in-place update']);

  const added = diffJob(await job(), await job({ extraGroup: true }), true);
  annotateJobDiff(added, { cache: updates({ Place: 1 }) });
  assert.deepEqual(added.TaskGroups![1]!.Tasks![0]!.Annotations, ['forces create']);
  assert.equal(added.TaskGroups![0]!.Updates, null);
});

test("the CLI prints a diff as Nomad's job plan does", async () => {
  const diff: JobDiff = diffJob(await job(), await job({ team: 'b', count: 3, args: '600' }), true);
  annotateJobDiff(diff, { api: updates({ Place: 2, DestructiveUpdate: 1 }) });
  assert.equal(
    formatJobDiff(diff, false),
    [
      '+/- Job: "web"',
      '+/- Meta[team]: "a" => "b"',
      '+/- Task Group: "api" (2 create, 1 create/destroy update)',
      '  +/- Count: "1" => "3" (forces create)',
      '  +/- Task: "server" (forces create/destroy update)',
      '    +/- Config {',
      '      +/- args[0]: "300" => "600"',
      '          command: "/bin/sleep"',
      '        }',
      '',
      '',
    ].join('\n'),
  );
  const unchanged = diffJob(await job(), await job(), true);
  annotateJobDiff(unchanged, { api: updates({ Ignore: 1 }) });
  assert.equal(formatJobDiff(unchanged, false), 'Job: "web"\nTask Group: "api" (1 ignore)\n  Task: "server"\n\n');
});

test('a task\'s volume_mount edits are VolumeMount objects, as Nomad\'s plan shows them', async () => {
  const base = await job();
  const withMount = structuredClone(base);
  withMount.TaskGroups[0]!.Volumes = { data: { Name: 'data', Type: 'host', Source: 'db', ReadOnly: false, Sticky: false, AccessMode: '', AttachmentMode: '', MountOptions: null, PerAlloc: false } };
  withMount.TaskGroups[0]!.Tasks[0]!.VolumeMounts = [{ Volume: 'data', Destination: '/data', ReadOnly: false, PropagationMode: 'private', SELinuxLabel: '' }];
  const task = diffJob(base, withMount, false).TaskGroups![0]!.Tasks![0]!;
  const mount = object(task, 'VolumeMount');
  assert.equal(mount?.Type, 'Added');
  assert.ok(mount?.Fields?.some((f) => f.Name === 'Destination' && f.New === '/data'), JSON.stringify(mount));
  assert.deepEqual(task.Fields, null, 'the mount is not also listed as flattened task fields');
});
