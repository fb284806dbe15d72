/**
 * The client's dynamic host volume manager against a scripted server connection and a real
 * state DB: a pending volume is made by the mkdir plugin, offered to the node and reported; the
 * same version is not acted on twice; a restarted client offers what it holds before it hears
 * from the servers; a plugin in host_volume_plugin_dir runs with Nomad's arguments and
 * environment; a delete removes and forgets the volume; the volumes are read once at start and
 * again only when the allocation watch reports their index moved.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { chmod, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import pino from 'pino';
import { HostVolumeManager } from '../../src/client/hostvolumes/host-volume-manager.js';
import type { HostVolumeReport, ServerConnection } from '../../src/client/server-connection.js';
import { StateDb } from '../../src/client/state/state-db.js';
import type { HostVolume } from '../../src/structs/dynamic-host-volume.js';
import type { ClientHostVolumeConfig } from '../../src/structs/host-volume.js';
import { FakeClock } from '../../src/time/clock.js';

let tmp: string;
before(async () => {
  tmp = await mkdtemp('/tmp/cv-hvm-');
});
after(async () => rm(tmp, { recursive: true, force: true }));

const volume = (over: Partial<HostVolume>): HostVolume => ({
  Namespace: 'default', ID: '0b5e8a3c-6f0e-4d52-9a37-1d2c3e4f5a6b', Name: 'data', PluginID: 'mkdir', NodePool: 'default', NodeID: 'node-1', Constraints: null,
  RequestedCapacityMinBytes: 0, RequestedCapacityMaxBytes: 0, CapacityBytes: 0, RequestedCapabilities: [], Parameters: null, HostPath: '',
  State: 'pending', CreateIndex: 5, CreateTime: 0, ModifyIndex: 5, ModifyTime: 0, ...over,
});

function manager(store: StateDb) {
  const reports: HostVolumeReport[] = [];
  const offered: Record<string, ClientHostVolumeConfig>[] = [];
  const connection = { reportHostVolume: async (r: HostVolumeReport) => void reports.push(r) } as unknown as ServerConnection;
  const m = new HostVolumeManager({
    volumesDir: join(tmp, 'host_volumes'),
    pluginDir: join(tmp, 'plugins'),
    store,
    connection,
    clock: new FakeClock(),
    logger: pino({ level: 'silent' }),
    onChange: async (v) => void offered.push(v),
  });
  return { m, reports, offered };
}

test('makes, offers, reports, survives a restart, and deletes', async () => {
  const dbPath = join(tmp, 'state.db');
  const store = new StateDb(dbPath);
  const { m, reports, offered } = manager(store);
  assert.equal(m.pluginAttributes()['plugins.host_volume.mkdir.version'], '0.0.1');
  const v = volume({ Parameters: { mode: '0750' } });
  await m.apply([v]);
  const path = join(tmp, 'host_volumes', v.ID);
  assert.equal((await stat(path)).mode & 0o7777, 0o750);
  assert.deepEqual(reports, [{ ID: v.ID, Op: 'create', HostPath: path, CapacityBytes: 0 }]);
  assert.deepEqual(offered.at(-1), { data: { Name: 'data', Path: path, ReadOnly: false, ID: v.ID, Namespace: 'default' } });
  // The same version again (the watch answered before the report was applied): nothing.
  await m.apply([v]);
  assert.equal(reports.length, 1);
  store.close();

  // A restarted client offers what it holds from its state DB.
  const reopened = new StateDb(dbPath);
  const again = manager(reopened);
  assert.deepEqual(again.m.fingerprint(), { data: { Name: 'data', Path: path, ReadOnly: false, ID: v.ID, Namespace: 'default' } });
  // Ready and held: nothing to do. Marked for deletion: removed, forgotten, reported.
  await again.m.apply([{ ...v, HostPath: path, State: 'ready', ModifyIndex: 7 }]);
  assert.equal(again.reports.length, 0);
  await again.m.apply([{ ...v, HostPath: path, State: 'ready', ModifyIndex: 9, DeleteRequested: true }]);
  assert.deepEqual(again.reports, [{ ID: v.ID, Op: 'delete' }]);
  await assert.rejects(stat(path), /ENOENT/);
  assert.deepEqual(again.offered.at(-1), {});
  assert.deepEqual(again.m.fingerprint(), {});
  reopened.close();
});

test('runs a plugin from host_volume_plugin_dir as Nomad does, and reports a missing one', async () => {
  const store = new StateDb(join(tmp, 'state2.db'));
  const { m, reports } = manager(store);
  const log = join(tmp, 'plugin.log');
  const plugin = join(tmp, 'plugins', 'echo-plugin');
  await writeFile(plugin, `#!/bin/sh\necho "$1 $2 $OPERATION $HOST_PATH $NODE_ID $VOLUME_NAME $CAPACITY_MIN_BYTES $PARAMETERS" >> ${log}\n[ "$1" = create ] && echo '{"path": "'"$2"'", "bytes": 42}'\nexit 0\n`);
  await chmod(plugin, 0o755);
  assert.equal(m.pluginAttributes()['plugins.host_volume.echo-plugin.version'], 'external');
  const id = '1b5e8a3c-6f0e-4d52-9a37-1d2c3e4f5a6b';
  const hostPath = join(tmp, 'host_volumes', id);
  await m.apply([volume({ ID: id, Name: 'ext', PluginID: 'echo-plugin', RequestedCapacityMinBytes: 7, Parameters: { a: 'b' } })]);
  assert.deepEqual(reports, [{ ID: id, Op: 'create', HostPath: hostPath, CapacityBytes: 42 }]);
  await m.apply([volume({ ID: id, Name: 'ext', PluginID: 'echo-plugin', HostPath: hostPath, ModifyIndex: 8, DeleteRequested: true })]);
  assert.deepEqual(reports[1], { ID: id, Op: 'delete' });
  assert.deepEqual((await readFile(log, 'utf8')).trim().split('\n'), [
    `create ${hostPath} create ${hostPath} node-1 ext 7 {"a":"b"}`,
    `delete ${hostPath} delete ${hostPath} node-1   {}`,
  ]);
  await m.apply([volume({ ID: '2b5e8a3c-6f0e-4d52-9a37-1d2c3e4f5a6b', Name: 'none', PluginID: 'not-installed' })]);
  assert.match(reports[2]?.Error ?? '', /no host volume plugin "not-installed"/);
  store.close();
});

test('a plugin that fails to make a new volume has what it made removed; a failed update keeps the volume and its data', async () => {
  const store = new StateDb(join(tmp, 'state3.db'));
  const { m, reports } = manager(store);
  const failFlag = join(tmp, 'fail-create');
  const plugin = join(tmp, 'plugins', 'half-plugin');
  // Makes the directory and a file in it before it fails (exit 1) when the flag file exists.
  await writeFile(plugin, `#!/bin/sh\nif [ "$1" = create ]; then mkdir -p "$2" && echo data > "$2/f"; [ -f ${failFlag} ] && exit 1; echo '{"path": "'"$2"'", "bytes": 0}'; exit 0; fi\nrm -rf "$2"\n`);
  await chmod(plugin, 0o755);

  await writeFile(failFlag, '');
  const fresh = volume({ ID: '2b5e8a3c-6f0e-4d52-9a37-1d2c3e4f5a6b', Name: 'fresh', PluginID: 'half-plugin' });
  await m.apply([fresh]);
  assert.equal(reports.at(-1)?.Op, 'create');
  assert.ok(reports.at(-1)?.Error, 'the failure is reported');
  await assert.rejects(stat(join(tmp, 'host_volumes', fresh.ID)), /ENOENT/, 'the part-made directory is removed');

  await rm(failFlag);
  const kept = volume({ ID: '3b5e8a3c-6f0e-4d52-9a37-1d2c3e4f5a6b', Name: 'kept', PluginID: 'half-plugin' });
  await m.apply([kept]);
  const path = join(tmp, 'host_volumes', kept.ID);
  assert.equal(reports.at(-1)?.Error, undefined);
  await writeFile(failFlag, '');
  // An update: the server cleared the path, the plugin runs again and fails.
  await m.apply([{ ...kept, ModifyIndex: 9 }]);
  assert.ok(reports.at(-1)?.Error);
  assert.equal(await readFile(join(path, 'f'), 'utf8'), 'data\n', 'the volume and its data stay');
  assert.equal(m.fingerprint()['kept']?.Path, path, 'and the node still offers it');
  await rm(failFlag);
  store.close();
});

test("reads the volumes once at start and again only when the allocation watch's index moves; a failed read is retried", async () => {
  const store = new StateDb(join(tmp, 'state4.db'));
  const clock = new FakeClock();
  const reads: string[] = [];
  let failNext = false;
  const vol = volume({ ID: '4b5e8a3c-6f0e-4d52-9a37-1d2c3e4f5a6b', Name: 'watched' });
  const connection = {
    reportHostVolume: async () => undefined,
    fetchHostVolumes: async (nodeId: string) => {
      reads.push(nodeId);
      if (failNext) {
        failNext = false;
        throw new Error('server unreachable');
      }
      return reads.length > 1 ? [vol] : [];
    },
  } as unknown as ServerConnection;
  const offered: Record<string, ClientHostVolumeConfig>[] = [];
  const m = new HostVolumeManager({ volumesDir: join(tmp, 'hv4'), pluginDir: join(tmp, 'plugins4'), store, connection, clock, logger: pino({ level: 'silent' }), onChange: async (v) => void offered.push(v) });
  const stop = new AbortController();
  const running = m.run(() => 'node-1', stop.signal);
  const settle = async (): Promise<void> => {
    for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
  };
  await settle();
  assert.deepEqual(reads, [], 'nothing read before the watch answered');
  m.noteIndex(0);
  await settle();
  assert.deepEqual(reads, ['node-1'], 'read once after the first answer');
  m.noteIndex(0);
  await settle();
  assert.equal(reads.length, 1, 'the same index: not read again');
  failNext = true;
  m.noteIndex(12);
  await settle();
  assert.equal(reads.length, 2);
  assert.equal(offered.length, 0, 'the failed read acted on nothing');
  await clock.advanceAsync(1_000);
  await settle();
  assert.equal(reads.length, 3, 'retried after a second');
  assert.equal(offered.at(-1)?.['watched']?.ID, vol.ID, 'the volume was made and offered');
  stop.abort();
  await running;
  store.close();
});
