/** Resolving a task's volume_mounts into host paths (the volume hook's pure part). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { destinationProblem, resolveTaskMounts } from '../../src/client/taskrunner/volume-mounts.js';
import type { ClientHostVolumeConfig, VolumeMount, VolumeRequest } from '../../src/structs/index.js';

const offered: Record<string, ClientHostVolumeConfig> = {
  db: { Name: 'db', Path: '/srv/db', ReadOnly: false },
  'db[2]': { Name: 'db[2]', Path: '/srv/db2', ReadOnly: false },
  certs: { Name: 'certs', Path: '/etc/ssl/certs', ReadOnly: true },
};
const req = (source: string, over: Partial<VolumeRequest> = {}): VolumeRequest => ({
  Name: 'v', Type: 'host', Source: source, ReadOnly: false, Sticky: false, AccessMode: '', AttachmentMode: '', MountOptions: null, PerAlloc: false, ...over,
});
const mount = (volume: string, destination: string, over: Partial<VolumeMount> = {}): VolumeMount => ({
  Volume: volume, Destination: destination, ReadOnly: false, PropagationMode: 'private', SELinuxLabel: '', ...over,
});

test('a mount gets the client\'s path for the volume, never one from the job', () => {
  const r = resolveTaskMounts('t', [mount('data', '/data'), mount('data', 'rel/dir/')], { data: req('db') }, offered, 'j.g[0]');
  assert.deepEqual(r, {
    mounts: [
      { hostPath: '/srv/db', taskPath: '/data', readOnly: false, propagationMode: 'private' },
      { hostPath: '/srv/db', taskPath: '/rel/dir', readOnly: false, propagationMode: 'private' },
    ],
  });
});

test('read-only when the host volume, the group request or the mount says so', () => {
  const ro = (volumes: Record<string, VolumeRequest>, m: VolumeMount) => {
    const r = resolveTaskMounts('t', [m], volumes, offered, 'j.g[0]');
    assert.ok('mounts' in r);
    return r.mounts[0]!.readOnly;
  };
  assert.equal(ro({ v: req('certs') }, mount('v', '/c')), true, 'a read-only host volume asked read-write');
  assert.equal(ro({ v: req('db', { ReadOnly: true }) }, mount('v', '/c')), true);
  assert.equal(ro({ v: req('db') }, mount('v', '/c', { ReadOnly: true })), true);
  assert.equal(ro({ v: req('db') }, mount('v', '/c')), false);
});

test('per_alloc picks the volume of the allocation\'s index', () => {
  const r = resolveTaskMounts('t', [mount('v', '/d')], { v: req('db', { PerAlloc: true }) }, offered, 'j.g[2]');
  assert.ok('mounts' in r);
  assert.equal(r.mounts[0]!.hostPath, '/srv/db2');
  const missing = resolveTaskMounts('t', [mount('v', '/d')], { v: req('db', { PerAlloc: true }) }, offered, 'j.g[5]');
  assert.deepEqual(missing, { problem: 'task "t" volume_mount[0]: host volume "db[5]" is not offered by this client' });
});

test('refused: unknown group volume, volume the client lacks, CSI volume, escaping or reserved destinations', () => {
  const problem = (volumes: Record<string, VolumeRequest>, m: VolumeMount): string => {
    const r = resolveTaskMounts('t', [m], volumes, offered, 'j.g[0]');
    assert.ok('problem' in r, `expected a problem for ${JSON.stringify(m)}`);
    return r.problem;
  };
  assert.match(problem({}, mount('v', '/d')), /the group has no volume "v"/);
  assert.match(problem({ v: req('elsewhere') }, mount('v', '/d')), /host volume "elsewhere" is not offered by this client/);
  assert.match(problem({ v: req('db', { Type: 'csi' }) }, mount('v', '/d')), /only host volumes are supported/);
  assert.match(problem({ v: req('db') }, mount('v', '../../../etc')), /must not contain "\.\."/);
  assert.match(problem({ v: req('db') }, mount('v', '/')), /root/);
  assert.match(problem({ v: req('db') }, mount('v', '/proc/sys')), /under \/proc/);
  assert.match(problem({ v: req('db') }, mount('v', '/d', { PropagationMode: 'shared' })), /propagation_mode/);
  // "constructor" is not a volume of the object prototype's.
  assert.match(problem({ v: req('constructor') }, mount('v', '/d')), /not offered/);
  assert.match(problem({}, mount('constructor', '/d')), /the group has no volume/);
});

test('destinationProblem: null for ordinary paths', () => {
  assert.equal(destinationProblem('/var/lib/db'), null);
  assert.equal(destinationProblem('data'), null);
  assert.equal(destinationProblem('/alloc/data'), null);
});
