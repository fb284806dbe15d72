/**
 * Dynamic host volumes cannot reach outside the client's host_volumes_dir. The plugins are
 * attacked directly (a volume ID with `..` or `/`, a hostile `mode`, a symlink in the volume's
 * place, symlinks a task left inside a volume, a plugin name that is a path, a plugin file that
 * links out of host_volume_plugin_dir), and a real ACL cluster (server + client-only agent) is
 * attacked over the API: names, IDs, plugin IDs and parameters that try to name other places, a
 * registration of `/etc` (directly and through a symlink inside host_volumes_dir), forged
 * client reports, and tokens without the capability (403), also through a body naming another
 * namespace. Every file and directory the attempts aim at is one this test made.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { chmod, lstat, mkdir, mkdtemp, readFile, readdir, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { AclToken } from '../../src/structs/acl.js';
import type { HostVolume, HostVolumeStub } from '../../src/structs/dynamic-host-volume.js';
import { MkdirPlugin } from '../../src/client/hostvolumes/mkdir-plugin.js';
import { findExternalPlugin } from '../../src/client/hostvolumes/external-plugin.js';
import { call, startAclCluster, type AclCluster } from './helpers/acl-cluster.js';

const ID = '0b5e8a3c-6f0e-4d52-9a37-1d2c3e4f5a6b';

describe('the plugins, attacked directly', () => {
  let tmp: string;
  let root: string;
  let victim: string;

  before(async () => {
    tmp = await mkdtemp('/tmp/cv-hv-escape-');
    root = join(tmp, 'host_volumes');
    victim = join(tmp, 'victim');
    await mkdir(root, { mode: 0o700 });
    await mkdir(victim, { mode: 0o700 });
    await writeFile(join(victim, 'precious'), 'keep me\n', { mode: 0o600 });
  });
  after(async () => rm(tmp, { recursive: true, force: true }));

  const intact = async (): Promise<void> => {
    assert.equal(await readFile(join(victim, 'precious'), 'utf8'), 'keep me\n');
    assert.equal((await stat(victim)).mode & 0o7777, 0o700, 'the victim directory keeps its mode');
  };

  it('refuses volume IDs that are paths, for create and delete', async () => {
    const plugin = new MkdirPlugin(root);
    for (const id of ['../victim', '../../tmp', '/etc', `${ID}/../../victim`, 'a/b', '..', '', `${ID}\u0000`]) {
      await assert.rejects(plugin.create({ ID: id, Name: 'x', NodeID: 'n', RequestedCapacityMinBytes: 0, RequestedCapacityMaxBytes: 0, Parameters: null }), /invalid volume ID/, id);
      await assert.rejects(plugin.delete({ ID: id }), /invalid volume ID/, id);
    }
    assert.deepEqual(await readdir(root), []);
    await intact();
  });

  it('refuses hostile modes, owners and unknown parameters before making anything', async () => {
    const plugin = new MkdirPlugin(root);
    const bad: Record<string, string>[] = [{ mode: '4777' }, { mode: '2777' }, { mode: '1777' }, { mode: '0o777' }, { mode: '-1' }, { mode: '777; rm -rf /' }, { mode: '99999' }, { uid: '-1' }, { gid: 'root' }, { path: '/etc' }, { mode: '0755', target: '../victim' }];
    for (const Parameters of bad) {
      await assert.rejects(plugin.create({ ID, Name: 'x', NodeID: 'n', RequestedCapacityMinBytes: 0, RequestedCapacityMaxBytes: 0, Parameters }), /Volume\.Parameters/, JSON.stringify(Parameters));
    }
    assert.deepEqual(await readdir(root), []);
  });

  it('refuses a symlink in the volume\'s place (never chmods its target) and deletes only the link', async () => {
    const plugin = new MkdirPlugin(root);
    await symlink(victim, join(root, ID));
    await assert.rejects(plugin.create({ ID, Name: 'x', NodeID: 'n', RequestedCapacityMinBytes: 0, RequestedCapacityMaxBytes: 0, Parameters: { mode: '0777' } }), /mkdir plugin: create/);
    await intact();
    await plugin.delete({ ID });
    await assert.rejects(lstat(join(root, ID)), /ENOENT/);
    await intact();
  });

  it('deletes a volume without following the symlinks a task left inside it', async () => {
    const plugin = new MkdirPlugin(root);
    const made = await plugin.create({ ID, Name: 'x', NodeID: 'n', RequestedCapacityMinBytes: 0, RequestedCapacityMaxBytes: 0, Parameters: { mode: '0777' } });
    assert.equal(made.path, join(root, ID));
    assert.equal((await stat(made.path)).mode & 0o7777, 0o777);
    await mkdir(join(made.path, 'sub'));
    await symlink(victim, join(made.path, 'to-victim-dir'));
    await symlink(join(victim, 'precious'), join(made.path, 'sub', 'to-victim-file'));
    await symlink('../../victim', join(made.path, 'sub', 'relative'));
    await plugin.delete({ ID });
    await assert.rejects(lstat(made.path), /ENOENT/);
    await intact();
  });

  it('finds other plugins by plain name only, inside host_volume_plugin_dir', async () => {
    const pluginDir = join(tmp, 'plugins');
    await mkdir(pluginDir);
    await writeFile(join(pluginDir, 'good'), '#!/bin/sh\necho "{}"\n');
    await chmod(join(pluginDir, 'good'), 0o755);
    await writeFile(join(pluginDir, 'not-exec'), '#!/bin/sh\n');
    await symlink('/bin/sh', join(pluginDir, 'link-out'));
    assert.equal(findExternalPlugin(pluginDir, 'good'), join(pluginDir, 'good'));
    assert.equal(findExternalPlugin(pluginDir, 'not-exec'), undefined);
    assert.equal(findExternalPlugin(pluginDir, 'link-out'), undefined, 'a plugin linking out of the directory is not found');
    assert.equal(findExternalPlugin(pluginDir, 'missing'), undefined);
    for (const id of ['../plugins/good', '/bin/sh', 'sh/..', '..', '.', 'good ', 'a\nb']) assert.throws(() => findExternalPlugin(pluginDir, id), /plain file name/, id);
  });
});

describe('the API, attacked over an ACL cluster', () => {
  let c: AclCluster;
  let creator: AclToken;
  let registrar: AclToken;
  let reader: AclToken;
  let otherNs: AclToken;
  let volumesDir: string;
  let victim: string;

  const create = (token: string, volume: Record<string, unknown>, query = '') => call<{ Volume: HostVolume }>(c.server.address, 'PUT', `/v1/volume/host/create${query}`, token, { Volume: volume });
  const register = (token: string, volume: Record<string, unknown>) => call<{ Volume: HostVolume }>(c.server.address, 'PUT', '/v1/volume/host/register', token, { Volume: volume });
  const volumes = async (): Promise<HostVolumeStub[]> => (await call<HostVolumeStub[]>(c.server.address, 'GET', '/v1/volumes?type=host&namespace=*', c.mgmt)).body;

  before(async () => {
    c = await startAclCluster();
    await c.namespace('team-a');
    creator = await c.token('hv-creator', 'namespace "default" {\n  capabilities = ["host-volume-create", "host-volume-delete"]\n}');
    registrar = await c.token('hv-registrar', 'namespace "default" {\n  capabilities = ["host-volume-register"]\n}');
    reader = await c.token('hv-reader', 'namespace "default" {\n  policy = "read"\n}');
    otherNs = await c.token('hv-team-a', 'namespace "team-a" {\n  capabilities = ["host-volume-create", "host-volume-delete", "host-volume-register"]\n}');
    volumesDir = join(c.client.dataDir, 'host_volumes');
    victim = join(c.tmp, 'victim');
    await mkdir(victim, { mode: 0o700 });
    await writeFile(join(victim, 'precious'), 'keep me\n', { mode: 0o600 });
  });
  after(async () => c?.close());

  it('answers 403 to tokens without the capability, also through a body naming another namespace', async () => {
    const vol = { Name: 'ok', PluginID: 'mkdir' };
    assert.equal((await create(reader.SecretID, vol)).status, 403);
    assert.equal((await create('', vol)).status, 403);
    assert.equal((await register(creator.SecretID, { Name: 'r', NodeID: c.node.ID, HostPath: volumesDir })).status, 403, 'create does not grant register');
    // Allowed in team-a, the body asks for default.
    assert.equal((await create(otherNs.SecretID, { ...vol, Namespace: 'default' }, '?namespace=team-a')).status, 403);
    assert.equal((await call(c.server.address, 'DELETE', `/v1/volume/host/${ID}`, reader.SecretID)).status, 403);
    assert.equal((await call(c.server.address, 'GET', '/v1/volumes?type=host', '')).status, 403);
    assert.deepEqual(await volumes(), []);
  });

  it('refuses names, IDs, plugin IDs and parameters that try to name other places', async () => {
    const attempts: [Record<string, unknown>, RegExp][] = [
      [{ Name: '../../victim' }, /Volume\.Name: invalid name/],
      [{ Name: '/etc' }, /Volume\.Name: invalid name/],
      [{ Name: '..' }, /Volume\.Name: invalid name/],
      [{ Name: 'x', ID: '../../victim' }, /Volume\.ID: invalid ID/],
      [{ Name: 'x', PluginID: '../../../bin/sh' }, /Volume\.PluginID: invalid plugin ID/],
      [{ Name: 'x', PluginID: '/bin/sh' }, /Volume\.PluginID: invalid plugin ID/],
      [{ Name: 'x', PluginID: 'not-installed' }, /no node meets constraints/],
      [{ Name: 'x', PluginID: 'not-installed', NodeID: c.node.ID }, /has no host volume plugin "not-installed"/],
      [{ Name: 'x', Parameters: { mode: '4777' } }, /Volume\.Parameters\.mode: invalid mode/],
      [{ Name: 'x', Parameters: { mode: '0777 ../victim' } }, /Volume\.Parameters\.mode: invalid mode/],
      [{ Name: 'x', Parameters: { path: victim } }, /Volume\.Parameters\.path/],
      [{ Name: 'x', HostPath: victim }, /Volume\.HostPath: is set by the plugin/],
    ];
    for (const [vol, why] of attempts) {
      const r = await create(creator.SecretID, vol);
      assert.equal(r.status, 400, `${JSON.stringify(vol)}: ${r.text}`);
      assert.match(r.text, why, JSON.stringify(vol));
    }
    assert.deepEqual(await volumes(), []);
    assert.deepEqual(await readdir(volumesDir), []);
  });

  it('never registers a path outside host_volumes_dir, through a symlink either', async () => {
    await symlink(victim, join(volumesDir, 'innocent-looking'));
    for (const HostPath of ['/etc', victim, join(volumesDir, 'innocent-looking')]) {
      const r = await register(registrar.SecretID, { Name: 'reg', NodeID: c.node.ID, HostPath });
      assert.equal(r.status, 500, r.text);
      assert.match(r.text, /is not inside host_volumes_dir/);
    }
    const dots = await register(registrar.SecretID, { Name: 'reg', NodeID: c.node.ID, HostPath: `${volumesDir}/../../victim` });
    assert.equal(dots.status, 400, dots.text);
    assert.deepEqual(await volumes(), [], 'a refused registration leaves no volume');
    await rm(join(volumesDir, 'innocent-looking'));
    // Inside it, a registration works (and is only forgotten on delete: the directory stays).
    await mkdir(join(volumesDir, 'pre-made'));
    const ok = await register(registrar.SecretID, { Name: 'reg', NodeID: c.node.ID, HostPath: join(volumesDir, 'pre-made') });
    assert.equal(ok.status, 200, ok.text);
    assert.equal(ok.body.Volume.State, 'ready');
    const del = await call(c.server.address, 'DELETE', `/v1/volume/host/${ok.body.Volume.ID}?namespace=team-a`, otherNs.SecretID);
    assert.equal(del.status, 404, 'a volume of default is not found from team-a');
    assert.equal((await call(c.server.address, 'DELETE', `/v1/volume/host/${ok.body.Volume.ID}`, c.mgmt)).status, 200);
    await stat(join(volumesDir, 'pre-made'));
    await rm(join(volumesDir, 'pre-made'), { recursive: true });
  });

  it('refuses forged client reports, and a delete never follows what a task left in the volume', async () => {
    const made = await create(creator.SecretID, { Name: 'data', Parameters: { mode: '0777' } });
    assert.equal(made.status, 200, made.text);
    const vol = made.body.Volume;
    assert.equal(vol.State, 'ready');
    assert.equal(vol.HostPath, join(volumesDir, vol.ID));
    // Only the node's own SecretID may report on its volumes.
    for (const token of ['', c.mgmt, creator.SecretID]) {
      const r = await call(c.server.address, 'PUT', '/v1/internal/host-volumes/report', token, { ID: vol.ID, Op: 'delete' });
      assert.equal(r.status, 403, r.text);
    }
    assert.equal((await call<HostVolume>(c.server.address, 'GET', `/v1/volume/host/${vol.ID}`, c.mgmt)).body.State, 'ready');
    // What a task could leave inside its volume: links out to the victim.
    await symlink(victim, join(vol.HostPath, 'to-victim'));
    await symlink(join(victim, 'precious'), join(vol.HostPath, 'precious'));
    const del = await call(c.server.address, 'DELETE', `/v1/volume/host/${vol.ID}`, creator.SecretID);
    assert.equal(del.status, 200, del.text);
    await assert.rejects(lstat(vol.HostPath), /ENOENT/);
    assert.equal(await readFile(join(victim, 'precious'), 'utf8'), 'keep me\n');
    assert.deepEqual(await volumes(), []);
  });
});
