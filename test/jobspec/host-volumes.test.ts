/**
 * A group's `volume` blocks and a task's `volume_mount` blocks, in HCL and API JSON: decoded into
 * Nomad's TaskGroup.Volumes and Task.VolumeMounts with Nomad's defaults, and Nomad's checks.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeApiJob, loadJobFile, parseJobspec } from '../../src/jobspec/index.js';
import { canonicalizeJob } from '../../src/structs/job-defaults.js';
import { formatValidationProblem, validateJob } from '../../src/structs/job-validate.js';
import { repoPath } from './repo-root.js';

const job = (group: string, task = ''): string => `job "stateful" {
  group "g" {
${group}
    task "t" {
      driver = "exec"
${task}
      config {
        command = "/bin/true"
      }
    }
  }
}`;

const problems = (j: ReturnType<typeof canonicalizeJob>): string[] => validateJob(j).map(formatValidationProblem);

test('HCL: volume and volume_mount become VolumeRequest and VolumeMount with Nomad defaults', async () => {
  const j = canonicalizeJob(
    await parseJobspec(
      job(
        '    volume "data" {\n      type      = "host"\n      source    = "db"\n      read_only = true\n      per_alloc = true\n    }',
        '      volume_mount {\n        volume      = "data"\n        destination = "/var/lib/db"\n      }\n      volume_mount {\n        volume           = "data"\n        destination      = "snap"\n        read_only        = true\n        propagation_mode = "host-to-task"\n      }',
      ),
    ),
  );
  const g = j.TaskGroups[0]!;
  assert.deepEqual(g.Volumes, {
    data: { Name: 'data', Type: 'host', Source: 'db', ReadOnly: true, Sticky: false, AccessMode: '', AttachmentMode: '', MountOptions: null, PerAlloc: true },
  });
  assert.deepEqual(g.Tasks[0]!.VolumeMounts, [
    { Volume: 'data', Destination: '/var/lib/db', ReadOnly: false, PropagationMode: 'private', SELinuxLabel: '' },
    { Volume: 'data', Destination: 'snap', ReadOnly: true, PropagationMode: 'host-to-task', SELinuxLabel: '' },
  ]);
  assert.deepEqual(validateJob(j), []);
});

test('HCL: a task without volume_mount has none; an unknown volume_mount attribute is named', async () => {
  const j = canonicalizeJob(await parseJobspec(job('')));
  assert.equal(j.TaskGroups[0]!.Volumes, null);
  assert.equal(j.TaskGroups[0]!.Tasks[0]!.VolumeMounts, null);
  await assert.rejects(
    parseJobspec(job('    volume "data" {\n      type   = "host"\n      source = "db"\n    }', '      volume_mount {\n        volume = "data"\n        destination = "/d"\n        mode = "rw"\n      }')),
    /unknown attribute "mode"/,
  );
});

test('JSON: TaskGroup.Volumes and Task.VolumeMounts decode the same way; mistyped fields are named', () => {
  const base = (vm: unknown) => ({
    Job: {
      ID: 'stateful',
      TaskGroups: [{ Name: 'g', Volumes: { data: { Type: 'host', Source: 'db' } }, Tasks: [{ Name: 't', Driver: 'exec', Config: { command: '/bin/true' }, VolumeMounts: vm }] }],
    },
  });
  const j = canonicalizeJob(decodeApiJob(base([{ Volume: 'data', Destination: '/data' }])));
  assert.equal(j.TaskGroups[0]!.Volumes?.data?.Name, 'data', 'the name comes from the key');
  assert.deepEqual(j.TaskGroups[0]!.Tasks[0]!.VolumeMounts, [{ Volume: 'data', Destination: '/data', ReadOnly: false, PropagationMode: 'private', SELinuxLabel: '' }]);
  assert.throws(() => decodeApiJob(base([{ Volume: 'data', Destination: '/data', ReadOnly: 'yes' }])), /ReadOnly must be a boolean/);
});

test('validation: Nomad\'s messages for empty sources, undefined volumes, bad types and escaping destinations', async () => {
  const j = canonicalizeJob(
    await parseJobspec(
      job(
        '    volume "a" {\n      type = "host"\n    }\n    volume "b" {\n      type   = "nfs"\n      source = "x"\n    }',
        '      volume_mount {\n        volume      = "nope"\n        destination = "/d"\n      }\n      volume_mount {\n        volume      = "a"\n        destination = "../../etc"\n      }\n      volume_mount {\n        volume           = "a"\n        destination      = "/d"\n        propagation_mode = "shared"\n      }',
      ),
    ),
  );
  const p = problems(j);
  assert.ok(p.some((m) => m.includes('Volume a has an empty source')), p.join('\n'));
  assert.ok(p.some((m) => m.includes('volume has unrecognized type "nfs"')), p.join('\n'));
  assert.ok(p.some((m) => m.includes('Task t has a volume mount (0) referencing undefined volume nope')), p.join('\n'));
  assert.ok(p.some((m) => m.includes('destination "../../etc" must not contain ".."')), p.join('\n'));
  assert.ok(p.some((m) => m.includes('propagation_mode must be one of private, host-to-task, bidirectional')), p.join('\n'));
});

test('validation: per_alloc is refused for system jobs and host volumes take no mount options', async () => {
  const src = `job "sys" {
  type = "system"
  group "g" {
    volume "data" {
      type      = "host"
      source    = "db"
      per_alloc = true
      mount_options {
        fs_type = "ext4"
      }
    }
    task "t" {
      driver = "exec"
      config {
        command = "/bin/true"
      }
    }
  }
}`;
  const p = problems(canonicalizeJob(await parseJobspec(src)));
  assert.ok(p.some((m) => m.includes('volume cannot be per_alloc for "system" jobs')), p.join('\n'));
  assert.ok(p.some((m) => m.includes('host volumes cannot have mount options')), p.join('\n'));
});

test('validation: a host volume request may name a host capability (Nomad 1.10); other modes are refused naming the volume', async () => {
  const ok = canonicalizeJob(await parseJobspec(job('    volume "data" {\n      type = "host"\n      source = "db"\n      access_mode = "single-node-single-writer"\n      attachment_mode = "file-system"\n    }')));
  assert.deepEqual(problems(ok), []);
  assert.deepEqual([ok.TaskGroups[0]!.Volumes!['data']!.AccessMode, ok.TaskGroups[0]!.Volumes!['data']!.AttachmentMode], ['single-node-single-writer', 'file-system']);
  const bad = canonicalizeJob(await parseJobspec(job('    volume "data" {\n      type = "host"\n      source = "db"\n      access_mode = "multi-node-multi-writer"\n      attachment_mode = "nfs"\n    }')));
  const p = problems(bad);
  assert.ok(p.some((m) => m.includes('volume "data"') && m.includes('access_mode "multi-node-multi-writer" is not a host volume access mode')), p.join('\n'));
  assert.ok(p.some((m) => m.includes('volume "data"') && m.includes('attachment_mode "nfs" is not a host volume attachment mode')), p.join('\n'));
});

test('examples/host-volume.hcl: a host volume mounted at /data', async () => {
  const j = await loadJobFile(repoPath('examples/host-volume.hcl'));
  assert.equal(j.TaskGroups[0]!.Volumes?.data?.Source, 'counter-data');
  assert.equal(j.TaskGroups[0]!.Tasks[0]!.VolumeMounts?.[0]?.Destination, '/data');
});
