/** The docker plugin's allowed_modes and the task options that loosen a container's confinement, without an engine. */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { DEFAULT_ALLOWED_MODES } from '../../src/drivers/docker/confinement-options.js';
import { parseDockerPluginConfig } from '../../src/drivers/docker/plugin-config.js';
import { parseDockerTask } from '../../src/drivers/docker/task-config.js';
import { mockTaskConfig, tempRoot } from './task-config.js';

type Obj = Record<string, unknown>;
const root = tempRoot('caravan-docker-modes-');
after(() => rmSync(root, { recursive: true, force: true }));

function hostConfig(config: Obj, plugin: Obj = {}): Obj {
  return parseDockerTask(mockTaskConfig(root, { image: 'busybox', ...config }), parseDockerPluginConfig(plugin)).create.HostConfig as Obj;
}

describe('plugin "docker" allowed_modes', () => {
  it('defaults to each namespace of the container\'s own', () => {
    assert.deepEqual(parseDockerPluginConfig({}).allowedModes, DEFAULT_ALLOWED_MODES);
    assert.deepEqual(DEFAULT_ALLOWED_MODES, { pid: ['private'], ipc: ['private', 'none', 'shareable'], uts: ['private'], userns: ['private'] });
  });

  it('reads the block (as HCL decodes it) and keeps defaults for namespaces it leaves out', () => {
    const c = parseDockerPluginConfig({ allowed_modes: [{ pid: ['private', 'host'], uts: ['host'] }] });
    assert.deepEqual(c.allowedModes, { pid: ['private', 'host'], ipc: ['private', 'none', 'shareable'], uts: ['host'], userns: ['private'] });
  });

  it('refuses an unknown namespace or mode, naming it', () => {
    assert.throws(() => parseDockerPluginConfig({ allowed_modes: [{ net: ['host'] }] }), /net/);
    assert.throws(() => parseDockerPluginConfig({ allowed_modes: [{ uts: ['container'] }] }), /"allowed_modes\.uts\[0\]" "container" is not a uts mode/);
    assert.throws(() => parseDockerPluginConfig({ allowed_modes: [{ pid: 'host' }] }), /allowed_modes\.pid/);
  });
});

describe('docker task namespace modes', () => {
  it('are refused outside allowed_modes, naming the option and how to allow it', () => {
    assert.throws(() => hostConfig({ pid_mode: 'host' }), /"pid_mode" "host" is not allowed on this client \(allowed_modes\.pid = \["private"\]; .*allow_privileged\)/);
    assert.throws(() => hostConfig({ ipc_mode: 'container:x' }), /"ipc_mode" "container:x" is not allowed/);
    assert.throws(() => hostConfig({ uts_mode: 'bogus' }), /"uts_mode" "bogus" is not a uts mode/);
    assert.throws(() => hostConfig({ pid_mode: 'container:' }), /"pid_mode" "container:" is not a pid mode/);
  });

  it('reach the engine when allowed_modes lists them, or with allow_privileged', () => {
    const listed = hostConfig({ pid_mode: 'host', ipc_mode: 'container:db-1', uts_mode: 'host', userns_mode: 'host' }, { allowed_modes: [{ pid: ['host'], ipc: ['container'], uts: ['host'], userns: ['host'] }] });
    assert.deepEqual([listed.PidMode, listed.IpcMode, listed.UTSMode, listed.UsernsMode], ['host', 'container:db-1', 'host', 'host']);
    const privileged = hostConfig({ pid_mode: 'host', userns_mode: 'host' }, { allow_privileged: true });
    assert.deepEqual([privileged.PidMode, privileged.UsernsMode], ['host', 'host']);
  });

  it('a private namespace is the engine default (no field), an IPC mode is passed as given', () => {
    const hc = hostConfig({ pid_mode: 'private', uts_mode: 'private', userns_mode: 'private', ipc_mode: 'none' });
    assert.equal('PidMode' in hc || 'UTSMode' in hc || 'UsernsMode' in hc, false);
    assert.equal(hc.IpcMode, 'none');
    assert.equal('PidMode' in hostConfig({}), false);
  });
});

describe('docker task security_opt and sysctl', () => {
  it('accepts options that keep or tighten the confinement', () => {
    const opts = ['no-new-privileges', 'no-new-privileges:true', 'apparmor=docker-default', 'label=level:s0:c100,c200', 'label:type:container_t', 'writable-cgroups=false'];
    assert.deepEqual(hostConfig({ security_opt: opts }).SecurityOpt, opts);
  });

  it('accepts loosening options only with allow_privileged', () => {
    const opts = ['seccomp=unconfined', 'apparmor=unconfined', 'label=disable', 'systempaths=unconfined'];
    assert.throws(() => hostConfig({ security_opt: opts }), /"security_opt\[0\]" "seccomp=unconfined" disables seccomp, which this client does not allow \(allow_privileged = false\)/);
    assert.deepEqual(hostConfig({ security_opt: opts }, { allow_privileged: true }).SecurityOpt, opts);
  });

  it('accepts namespaced sysctls, refuses host-wide ones unless allow_privileged', () => {
    const ok = { 'net.core.somaxconn': '1024', 'kernel.shmmax': '1000', 'fs.mqueue.msg_max': '20' };
    assert.deepEqual(hostConfig({ sysctl: [ok] }).Sysctls, ok);
    assert.throws(() => hostConfig({ sysctl: [{ 'kernel.core_pattern': '|/x' }] }), /"sysctl\.kernel\.core_pattern" is a host-wide sysctl/);
    assert.throws(() => hostConfig({ ipc_mode: 'host', sysctl: [{ 'kernel.shmmax': '1' }] }, { allowed_modes: [{ ipc: ['host'] }] }), /would change the host's ipc namespace/);
    assert.deepEqual(hostConfig({ sysctl: [{ 'kernel.core_pattern': 'core' }] }, { allow_privileged: true }).Sysctls, { 'kernel.core_pattern': 'core' });
  });
});
