/** The volume hook: host volume mounts for drivers that isolate the filesystem, a refusal for the others. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { TaskHookRequest } from '../../../src/client/taskrunner/interfaces.js';
import { VolumeHook } from '../../../src/client/taskrunner/hooks/volume-hook.js';
import { TaskSetupError } from '../../../src/client/taskrunner/task-setup-error.js';
import { FsIsolation } from '../../../src/drivers/driver.js';
import { mockAlloc, mockJob, mockNode } from '../../mock/factories.js';


function request(driver: string, fsIsolation: FsIsolation, mounts: unknown[] | null): TaskHookRequest {
  return {
    alloc: { Name: 'j.g[0]' },
    group: { Volumes: { data: { Name: 'data', Type: 'host', Source: 'db', ReadOnly: false, Sticky: false, AccessMode: '', AttachmentMode: '', MountOptions: null, PerAlloc: false } } },
    task: { Name: 't', Driver: driver, VolumeMounts: mounts },
    node: { hostVolumes: { db: { Name: 'db', Path: '/srv/db', ReadOnly: false } } },
    driver: { name: driver, capabilities: () => ({ fsIsolation }) },
  } as unknown as TaskHookRequest;
}

const dataMount = { Volume: 'data', Destination: '/data', ReadOnly: false, PropagationMode: 'private', SELinuxLabel: '' };

test('exec and docker tasks get their mounts', async () => {
  for (const [driver, iso] of [['exec', FsIsolation.Chroot], ['docker', FsIsolation.Image]] as const) {
    const out = await new VolumeHook().prestart(request(driver, iso, [dataMount]));
    assert.deepEqual(out.mounts, [{ hostPath: '/srv/db', taskPath: '/data', readOnly: false, propagationMode: 'private' }], driver);
  }
});

test('a task without volume_mount is left alone, whatever its driver', async () => {
  assert.deepEqual(await new VolumeHook().prestart(request('raw_exec', FsIsolation.None, null)), {});
});

test('raw_exec (no filesystem isolation) refuses volume mounts with Nomad\'s reason, as a setup failure', async () => {
  await assert.rejects(new VolumeHook().prestart(request('raw_exec', FsIsolation.None, [dataMount])), (err: unknown) => {
    assert.ok(err instanceof TaskSetupError);
    assert.match(err.message, /task driver "raw_exec" does not support host volumes/);
    return true;
  });
});

test('a mount the client cannot honour fails the setup, naming the mount', async () => {
  await assert.rejects(
    new VolumeHook().prestart(request('exec', FsIsolation.Chroot, [{ ...dataMount, Volume: 'other' }])),
    /task "t" volume_mount\[0\]: the group has no volume "other"/,
  );
});

test('the destination and volume may use the task\'s ${NOMAD_*} values, as Nomad interpolates them', async () => {
  const alloc = mockAlloc(mockJob(), mockNode());
  const group = { ...alloc.Job!.TaskGroups[0]!, Volumes: { data: { Name: 'data', Type: 'host', Source: 'db', ReadOnly: false, Sticky: false, AccessMode: '', AttachmentMode: '', MountOptions: null, PerAlloc: false } } };
  const task = { ...group.Tasks[0]!, VolumeMounts: [{ ...dataMount, Destination: '${NOMAD_ALLOC_DIR}/db-${NOMAD_ALLOC_INDEX}' }] };
  const req = {
    alloc,
    group,
    task,
    node: { id: 'n', name: 'n', datacenter: 'dc1', region: 'global', nodeClass: '', attributes: {}, meta: {}, hostVolumes: { db: { Name: 'db', Path: '/srv/db', ReadOnly: false } } },
    driver: { name: 'exec', capabilities: () => ({ fsIsolation: FsIsolation.Chroot }) },
  } as unknown as TaskHookRequest;
  const out = await new VolumeHook().prestart(req);
  assert.deepEqual(out.mounts?.map((m) => m.taskPath), ['/alloc/db-0']);
});
