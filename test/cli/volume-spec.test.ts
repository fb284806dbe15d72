import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { parseSize, readVolumeSpec } from '../../src/cli/volume-spec.js';
import { repoPath } from '../jobspec/repo-root.js';

test('examples/host-volume-dynamic.hcl reads as the API Volume', async () => {
  const file = repoPath('examples/host-volume-dynamic.hcl');
  const vol = await readVolumeSpec(file, await readFile(file, 'utf8'), false);
  assert.deepEqual(vol, {
    Name: 'counter-data',
    PluginID: 'mkdir',
    NodePool: 'default',
    RequestedCapacityMinBytes: 1024 ** 3,
    RequestedCapacityMaxBytes: 10 * 1024 ** 3,
    RequestedCapabilities: [{ AccessMode: 'single-node-writer', AttachmentMode: 'file-system' }],
    Constraints: [{ LTarget: '${attr.kernel.name}', Operand: '=', RTarget: 'linux' }],
    Parameters: { mode: '0777' },
  });
});

test('volume specifications: sizes, registrations, JSON, and refusals that name the problem', async () => {
  const table: { name: string; text: string; json?: boolean; want?: Record<string, unknown>; error?: RegExp }[] = [
    { name: 'register', text: 'type = "host"\nname = "r"\nnode_id = "n1"\nhost_path = "/srv/r"\n', want: { Name: 'r', NodeID: 'n1', HostPath: '/srv/r' } },
    { name: 'SI size', text: 'type = "host"\nname = "s"\ncapacity_min = "500 MB"\n', want: { Name: 's', RequestedCapacityMinBytes: 500e6 } },
    { name: 'JSON Volume', text: '{"Volume": {"Name": "j", "Type": "host"}}', json: true, want: { Name: 'j' } },
    { name: 'csi', text: 'type = "csi"\nname = "c"\n', error: /volume type "csi" is not supported: Caravan runs host volumes only/ },
    { name: 'no type', text: 'name = "c"\n', error: /missing type/ },
    { name: 'unknown argument', text: 'type = "host"\nname = "u"\nmount_dir = "/x"\n', error: /unsupported argument "mount_dir"/ },
    { name: 'bad size', text: 'type = "host"\nname = "b"\ncapacity_max = "lots"\n', error: /capacity_max: invalid size "lots"/ },
  ];
  for (const row of table) {
    const read = readVolumeSpec(`${row.name}.${row.json ? 'json' : 'hcl'}`, row.text, row.json === true);
    if (row.error) await assert.rejects(read, row.error, row.name);
    else assert.deepEqual(await read, row.want, row.name);
  }
  assert.equal(parseSize('x', '10GiB'), 10 * 1024 ** 3);
  assert.equal(parseSize('x', 2048), 2048);
  assert.throws(() => parseSize('x', -1), /invalid size/);
});
