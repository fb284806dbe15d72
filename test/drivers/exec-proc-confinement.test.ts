/** The bubblewrap arguments that make /proc's global knobs read-only and mask the rest (runc's lists). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_CHROOT_ENV } from '../../src/drivers/exec/exec-config.js';
import { MASKED_DIRS, MASKED_FILES, READONLY_PATHS, procConfinementArgs } from '../../src/drivers/exec/proc-confinement.js';

test('proc confinement: every path the kernel has is bound read-only or masked; missing ones are left out', () => {
  const all = procConfinementArgs(() => true, { ...DEFAULT_CHROOT_ENV, '/sys': '/sys' });
  for (const p of READONLY_PATHS) assert.ok(all.join(' ').includes(`--ro-bind ${p} ${p}`), p);
  for (const p of MASKED_FILES) assert.ok(all.join(' ').includes(`--ro-bind /dev/null ${p}`), p);
  for (const p of MASKED_DIRS) assert.ok(all.join(' ').includes(`--tmpfs ${p} --remount-ro ${p}`), p);
  assert.ok(all.join(' ').includes('--ro-bind /proc/sys /proc/sys'));

  const none = procConfinementArgs((p) => p !== '/proc/kcore' && p !== '/proc/sysrq-trigger', DEFAULT_CHROOT_ENV);
  assert.equal(none.includes('/proc/kcore'), false, 'a file the kernel lacks cannot be bound over');
  assert.equal(none.includes('/proc/sysrq-trigger'), false);
});

test('proc confinement: /sys paths are masked only where a chroot_env shows them, through the host path behind it', () => {
  assert.equal(procConfinementArgs(() => true, DEFAULT_CHROOT_ENV).some((a) => a.startsWith('/sys')), false, 'no /sys in the default sandbox');
  const seen: string[] = [];
  const args = procConfinementArgs((p) => {
    seen.push(p);
    return true;
  }, { '/host/sys': '/sys' });
  assert.ok(seen.includes('/host/sys/firmware'), 'checked on the host side of the binding');
  assert.ok(args.join(' ').includes('--tmpfs /sys/firmware --remount-ro /sys/firmware'));
});
