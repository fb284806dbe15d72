/**
 * The docker driver's pause containers under the client's group network configurator, with a
 * private dockerd and the real kernel: a group with a docker task gets its namespace from a
 * pause container (`nomad_init_<alloc id>`, infra_image, network mode none, the group's
 * hostname) named after the allocation; a restarted agent finds it again, sets up anew when it
 * is gone, and a starting agent sweeps the pause container and namespace of an allocation it
 * no longer holds. A task joins the pause container's network, and the dangling-container
 * collection never takes a pause container in use. Needs root, iproute2, docker.io and
 * busybox-static.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Allocation } from '../../src/structs/index.js';
import { AllocNetworkConfigurator, clientNetworkConfig } from '../../src/client/network/alloc-network-configurator.js';
import { DockerDriver } from '../../src/drivers/docker/docker-driver.js';
import { BUSYBOX_IMAGE, engineCall, importBusybox, importPauseImage, listContainers, PAUSE_IMAGE, startPrivateDockerd, type PrivateDockerd } from './private-dockerd.js';
import { mockTaskConfig, tempRoot } from './task-config.js';
import { netnsNames } from '../integration/helpers/group-network.js';

let dockerd: PrivateDockerd | undefined;
let stateDir: string;
let setupError: Error | null = null;
const drivers: DockerDriver[] = [];

before(async () => {
  try {
    if (process.getuid?.() !== 0) throw new Error('the pause container tests need root (network namespaces)');
    dockerd = await startPrivateDockerd();
    await importPauseImage(dockerd);
    await importBusybox(dockerd);
  } catch (err) {
    setupError = err as Error;
    return;
  }
  stateDir = await mkdtemp(join(tmpdir(), 'cv-pause-'));
});

after(async () => {
  for (const d of drivers) await d.shutdown();
  await dockerd?.stop();
  if (stateDir) await rm(stateDir, { recursive: true, force: true });
});

/** A configurator as a freshly started agent has it: a new docker driver on the same engine and state dir. */
function agentStart(): AllocNetworkConfigurator {
  if (setupError) throw setupError;
  const driver = new DockerDriver({ pluginConfig: { endpoint: dockerd!.endpoint, infra_image: PAUSE_IMAGE } });
  drivers.push(driver);
  return new AllocNetworkConfigurator(clientNetworkConfig({}), stateDir, (name) => (name === 'docker' ? driver.network : undefined));
}

function dockerAlloc(): Allocation {
  return {
    ID: randomUUID(),
    TaskGroup: 'g',
    Job: { TaskGroups: [{ Name: 'g', Networks: [{ Mode: 'none', DNS: null, Hostname: 'sandbox-one' }], Tasks: [{ Name: 'exec-side', Driver: 'exec' }, { Name: 'web', Driver: 'docker' }] }] },
    AllocatedResources: { Tasks: {}, TaskLifecycles: {}, Shared: { Networks: null, DiskMB: 0, Ports: [] } },
  } as unknown as Allocation;
}

interface PauseInspect {
  Id: string;
  Config: { Hostname: string; Image: string };
  State: { Running: boolean; Pid: number };
  HostConfig: { NetworkMode: string };
}

async function pauseOf(allocId: string): Promise<PauseInspect | null> {
  const r = await engineCall(dockerd!.socket, 'GET', `/containers/nomad_init_${allocId}/json`);
  return r.status === 200 ? (JSON.parse(r.text) as PauseInspect) : null;
}

/** The named namespace a process is in (`ip netns identify`). */
function namedNetnsOf(pid: number): string {
  return execFileSync('ip', ['netns', 'identify', String(pid)], { encoding: 'utf8' }).trim();
}

test('the pause container owns the namespace named after the allocation; restart, loss and sweep', async () => {
  const alloc = dockerAlloc();
  const first = agentStart();
  const net = await first.setup(alloc);
  const pause = await pauseOf(alloc.ID);
  assert.ok(pause?.State.Running, 'nomad_init_<alloc id> runs');
  assert.equal(net?.sandboxId, pause.Id);
  assert.equal(pause.Config.Image, PAUSE_IMAGE);
  assert.equal(pause.Config.Hostname, 'sandbox-one');
  assert.equal(pause.HostConfig.NetworkMode, 'none');
  assert.equal(net?.netnsPath, `/var/run/netns/${alloc.ID}`);
  assert.equal(namedNetnsOf(pause.State.Pid), alloc.ID, 'the named namespace is the pause container\'s');
  assert.deepEqual(await first.setup(alloc), net, 'set-up again is the same network');

  // A restarted agent finds the network and its pause container again.
  assert.deepEqual(await agentStart().restore(alloc.ID), net);

  // The pause container went away while the agent was down: restore says so, set-up makes a new one.
  await engineCall(dockerd!.socket, 'DELETE', `/containers/${pause.Id}?force=1`);
  const restarted = agentStart();
  assert.equal(await restarted.restore(alloc.ID), null);
  const again = await restarted.setup(alloc);
  const pause2 = await pauseOf(alloc.ID);
  assert.ok(pause2?.State.Running);
  assert.notEqual(pause2.Id, pause.Id);
  assert.equal(again?.sandboxId, pause2.Id);
  assert.equal(namedNetnsOf(pause2.State.Pid), alloc.ID);

  // An agent that no longer holds the allocation removes its namespace and pause container.
  const swept = await agentStart().sweep(new Set());
  assert.deepEqual(swept, [alloc.ID]);
  assert.equal(await pauseOf(alloc.ID), null);
  assert.ok(!netnsNames().includes(alloc.ID));
});

test('a group without a docker task gets a namespace of the client\'s own, no pause container', async () => {
  const alloc = dockerAlloc();
  (alloc.Job!.TaskGroups[0]!.Tasks as unknown as { Driver: string }[])[1]!.Driver = 'exec';
  const cfg = agentStart();
  const net = await cfg.setup(alloc);
  assert.equal(net?.sandboxId, undefined);
  assert.equal(await pauseOf(alloc.ID), null);
  await cfg.teardown(alloc.ID);
  assert.ok(!netnsNames().includes(alloc.ID));
});

test('an infra_image that cannot be pulled fails the set-up and leaves nothing behind', async () => {
  if (setupError) throw setupError;
  const driver = new DockerDriver({ pluginConfig: { endpoint: dockerd!.endpoint, infra_image: 'caravan-missing-pause:none' } });
  drivers.push(driver);
  const cfg = new AllocNetworkConfigurator(clientNetworkConfig({}), stateDir, (name) => (name === 'docker' ? driver.network : undefined));
  const alloc = dockerAlloc();
  await assert.rejects(cfg.setup(alloc), /caravan-missing-pause/);
  assert.equal(await pauseOf(alloc.ID), null);
  assert.ok(!netnsNames().includes(alloc.ID));
});

test('a docker task joins the pause container\'s namespace, and dangling collection keeps the pause container', async () => {
  if (setupError) throw setupError;
  const driver = new DockerDriver({
    pluginConfig: { endpoint: dockerd!.endpoint, infra_image: PAUSE_IMAGE, gc: [{ dangling_containers: [{ period: '100ms', creation_grace: '0s' }] }] },
    clientId: 'client-pause',
  });
  drivers.push(driver);
  const cfg = new AllocNetworkConfigurator(clientNetworkConfig({}), stateDir, (name) => (name === 'docker' ? driver.network : undefined));
  const alloc = dockerAlloc();
  const net = await cfg.setup(alloc);
  const root = tempRoot('caravan-pause-task-');
  try {
    const task = mockTaskConfig(root, { image: BUSYBOX_IMAGE, command: 'sh', args: ['-c', 'hostname; sleep 1000'] }, {
      allocId: alloc.ID,
      id: `${alloc.ID}/web`,
      networkMode: 'none',
      networkIsolation: { path: net!.netnsPath, address: '', sandboxId: net!.sandboxId! },
    });
    const h = await driver.startTask(task);
    const pid = h.pid;
    assert.equal(namedNetnsOf(pid), alloc.ID, 'the task\'s process is in the allocation\'s namespace');
    // Several collection passes (every 100 ms, no grace): the pause container in use stays.
    await new Promise((r) => setTimeout(r, 800));
    assert.ok((await pauseOf(alloc.ID))?.State.Running, 'the pause container was not collected as dangling');
    await driver.destroyTask(h.taskId, true);
    await cfg.teardown(alloc.ID);
    assert.equal(await pauseOf(alloc.ID), null);
    assert.deepEqual((await listContainers(dockerd!)).filter((c) => c.Labels['com.hashicorp.nomad.alloc_id'] === alloc.ID), []);
  } finally {
    await rm(root, { recursive: true, force: true });
  }
});
