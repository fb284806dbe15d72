/**
 * Hostile docker task configs (issue 26 item 7 and the docker refusals the review found held):
 * each is refused by the docker driver's validation, on the client's default plugin config,
 * before anything reaches the engine, with an error naming the option. No engine is needed.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { parseDockerPluginConfig } from '../../src/drivers/docker/plugin-config.js';
import { parseDockerTask } from '../../src/drivers/docker/task-config.js';
import { DriverError } from '../../src/drivers/driver.js';
import { mockTaskConfig, tempRoot } from '../drivers/task-config.js';

const HOSTILE: Array<[string, Record<string, unknown>, string]> = [
  // Item 7: host namespaces and unconfined security options.
  ['host PID namespace', { pid_mode: 'host' }, 'pid_mode'],
  ['host IPC namespace', { ipc_mode: 'host' }, 'ipc_mode'],
  ['host UTS namespace', { uts_mode: 'host' }, 'uts_mode'],
  ['host user namespace', { userns_mode: 'host' }, 'userns_mode'],
  ['another container\'s PID namespace', { pid_mode: 'container:web-0b7c2d4e' }, 'pid_mode'],
  ['another container\'s IPC namespace', { ipc_mode: 'container:web-0b7c2d4e' }, 'ipc_mode'],
  ['seccomp unconfined', { security_opt: ['seccomp=unconfined'] }, 'security_opt[0]'],
  ['seccomp unconfined, colon form', { security_opt: ['seccomp:unconfined'] }, 'security_opt[0]'],
  ['a custom allow-all seccomp profile', { security_opt: ['seccomp={"defaultAction":"SCMP_ACT_ALLOW"}'] }, 'security_opt[0]'],
  ['apparmor unconfined', { security_opt: ['no-new-privileges', 'apparmor=unconfined'] }, 'security_opt[1]'],
  ['SELinux labeling disabled', { security_opt: ['label=disable'] }, 'security_opt[0]'],
  ['SELinux labeling disabled, colon form', { security_opt: ['label:disable'] }, 'security_opt[0]'],
  ['SELinux super-privileged type', { security_opt: ['label=type:spc_t'] }, 'security_opt[0]'],
  ['unmasked /proc and /sys', { security_opt: ['systempaths=unconfined'] }, 'security_opt[0]'],
  ['no-new-privileges turned off', { security_opt: ['no-new-privileges=false'] }, 'security_opt[0]'],
  ['writable cgroups', { security_opt: ['writable-cgroups=true'] }, 'security_opt[0]'],
  ['an unknown security option', { security_opt: ['proc-opts=rw'] }, 'security_opt[0]'],
  // Held: kept as tests.
  ['privileged', { privileged: true }, 'privileged'],
  ['a host volume', { volumes: ['/etc:/host-etc'] }, 'volumes[0]'],
  ['a bind mount of /', { mount: [{ type: 'bind', source: '/', target: '/host' }] }, 'mount[0].source'],
  ['a ../ volume leaving the allocation', { volumes: ['../../../../:/host'] }, 'volumes[0]'],
  ['a ../ bind mount leaving the allocation', { mount: [{ type: 'bind', source: '../../..', target: '/host' }] }, 'mount[0].source'],
  ['cap_add SYS_ADMIN', { cap_add: ['SYS_ADMIN'] }, 'cap_add[0]'],
  ['cap_add ALL', { cap_add: ['ALL'] }, 'cap_add[0]'],
  ['a runtime outside allow_runtimes', { runtime: 'runsc-unconfined' }, 'runtime'],
  ['devices', { devices: [{ host_path: '/dev/sda', container_path: '/dev/sda' }] }, 'devices'],
  ['sysctl kernel.core_pattern', { sysctl: [{ 'kernel.core_pattern': '|/tmp/x' }] }, 'sysctl.kernel.core_pattern'],
  ['sysctl kernel.modprobe', { sysctl: [{ 'kernel.modprobe': '/tmp/x' }] }, 'sysctl.kernel.modprobe'],
  ['a net sysctl in the host network namespace', { network_mode: 'host', sysctl: [{ 'net.ipv4.ip_forward': '1' }] }, 'sysctl.net.ipv4.ip_forward'],
];

describe('docker refuses task configs that leave the container\'s confinement', () => {
  const root = tempRoot('caravan-docker-hostile-');
  const plugin = parseDockerPluginConfig({});
  for (const [what, config, field] of HOSTILE) {
    it(`refuses ${what}`, () => {
      assert.throws(() => parseDockerTask(mockTaskConfig(root, { image: 'busybox', ...config }), plugin), (e: unknown) => {
        assert.ok(e instanceof DriverError, String(e));
        assert.ok(e.message.includes(`"${field}"`), `${e.message} names ${field}`);
        return true;
      });
    });
  }
  it('cleans up', () => rmSync(root, { recursive: true, force: true }));
});
