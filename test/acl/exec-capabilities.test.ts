// Which capabilities an exec needs follows what the task's driver isolates, never its name
// (issue 26 item 1): every built-in driver declares its isolation, and anything unknown fails closed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execCapabilities } from '../../src/acl/exec-capabilities.js';
import { builtinDrivers, FsIsolation, type DriverCapabilities, type FsIsolation as FsIsolationValue } from '../../src/drivers/index.js';
import { MissingDriver } from '../../src/client/taskrunner/missing-driver.js';

test('alloc-node-exec is needed unless the filesystem is isolated; unknown isolation fails closed', () => {
  assert.deepEqual(execCapabilities({ fsIsolation: FsIsolation.Chroot }), ['alloc-exec']);
  assert.deepEqual(execCapabilities({ fsIsolation: FsIsolation.Image }), ['alloc-exec']);
  assert.deepEqual(execCapabilities({ fsIsolation: FsIsolation.None }), ['alloc-exec', 'alloc-node-exec']);
  assert.deepEqual(execCapabilities(undefined), ['alloc-exec', 'alloc-node-exec']);
  const unknown = { fsIsolation: 'unveil' as FsIsolationValue } satisfies DriverCapabilities;
  assert.deepEqual(execCapabilities(unknown), ['alloc-exec', 'alloc-node-exec']);
});

test('the built-in drivers declare their isolation; mock_driver exists only where the config enables it', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'cv-drv-'));
  try {
    const plain = builtinDrivers({ dataDir });
    assert.deepEqual([...plain.keys()].sort(), ['docker', 'exec', 'raw_exec']);
    const isolation = (name: string, m = plain) => m.get(name)!.capabilities().fsIsolation;
    assert.equal(isolation('raw_exec'), FsIsolation.None);
    assert.equal(isolation('exec'), FsIsolation.Chroot);
    assert.equal(isolation('docker'), FsIsolation.Image);
    assert.equal(new MissingDriver('qemu').capabilities().fsIsolation, FsIsolation.None);

    assert.equal(builtinDrivers({ dataDir, plugins: { mock_driver: { enabled: false } } }).has('mock_driver'), false);
    assert.equal(builtinDrivers({ dataDir, plugins: { mock_driver: { enabled: 'true' } } }).has('mock_driver'), false, 'only the boolean true enables it');
    const withMock = builtinDrivers({ dataDir, plugins: { mock_driver: { enabled: true } } });
    assert.equal(isolation('mock_driver', withMock), FsIsolation.None);
    for (const d of [...plain.values(), ...withMock.values()]) await d.shutdown();
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});
