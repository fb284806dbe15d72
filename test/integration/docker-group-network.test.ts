/**
 * Docker tasks in group networks, with a real dev agent and a private dockerd: the allocation's
 * namespace is owned by a pause container (`nomad_init_<alloc id>`, from `infra_image`), named
 * after the allocation so CNI and exec tasks use it as any other; docker tasks join it with
 * `container:<pause id>`. A docker web server in bridge mode is reached through its mapped host
 * port, an exec task of the same group reaches it over 127.0.0.1, the group's hostname and dns
 * reach the container; an agent killed with -9 and restarted finds the pause container again;
 * a stopped allocation leaves no pause container, namespace, link or rule.
 *
 * Needs root, iproute2, iptables, nsenter, Debian's containernetworking-plugins, docker.io and
 * busybox-static: without them the first test fails saying what is missing.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Allocation } from '../../src/structs/index.js';
import { BUSYBOX_IMAGE, engineCall, importBusybox, importPauseImage, listContainers, PAUSE_IMAGE, startPrivateDockerd, type PrivateDockerd } from '../drivers/private-dockerd.js';
import { api, startAgent, type AgentProcess } from './helpers/agent-process.js';
import { getAlloc, runJob, teardown, waitFor, waitRunning } from './helpers/client-agent.js';
import { bridgePorts, CNI_PLUGIN_DIR, netnsNames, removeTestBridge, requireGroupNetworking, rulesMentioning, testBridge, type TestBridge } from './helpers/group-network.js';

let agent: AgentProcess | undefined;
let dockerd: PrivateDockerd | undefined;
let dataDir: string;
let jobsDir: string;
let configFile: string;
let bridge: TestBridge;
let setupError: Error | null = null;

before(async () => {
  try {
    requireGroupNetworking();
    dockerd = await startPrivateDockerd();
    await importBusybox(dockerd);
    await importPauseImage(dockerd);
  } catch (err) {
    setupError = err as Error;
    return;
  }
  bridge = testBridge();
  dataDir = await mkdtemp('/tmp/cv-dgn-');
  jobsDir = await mkdtemp('/tmp/cv-dgn-jobs-');
  configFile = join(jobsDir, 'agent.hcl');
  await writeFile(
    configFile,
    `client {\n  bridge_network_name   = "${bridge.name}"\n  bridge_network_subnet = "${bridge.subnet}"\n  cni_path              = "${CNI_PLUGIN_DIR}"\n}\n` +
      `plugin "docker" {\n  config {\n    endpoint   = "${dockerd.endpoint}"\n    infra_image = "${PAUSE_IMAGE}"\n    gc {\n      image = false\n    }\n  }\n}\n`,
  );
  agent = await startAgent({ roleArgs: ['-dev'], dataDir, readyTimeoutMs: 120_000, extraArgs: ['-config', configFile] });
});

after(async () => {
  if (agent) await teardown(agent, dataDir);
  await dockerd?.stop();
  if (bridge) removeTestBridge(bridge);
  if (jobsDir) await rm(jobsDir, { recursive: true, force: true });
});

function ready(): { agent: AgentProcess; dockerd: PrivateDockerd } {
  if (setupError) throw setupError;
  return { agent: agent!, dockerd: dockerd! };
}

/** Fetches the docker task's page over the namespace's loopback, prints it, then stays up. */
const PEER_SCRIPT = `
import time, urllib.request
for i in range(300):
    try:
        print('PEER', urllib.request.urlopen('http://127.0.0.1:8080/', timeout=2).read().decode().strip(), flush=True)
        break
    except Exception:
        time.sleep(0.2)
time.sleep(3600)
`;

/** A bridge group: a docker web server on `to` 8080 (busybox httpd) beside an exec task that fetches it on 127.0.0.1. */
function sharedJob(name: string): string {
  const web = JSON.stringify(['-c', 'echo HOST $(hostname); cat /etc/resolv.conf /etc/hosts; busybox mkdir -p /tmp/www && echo hello-docker > /tmp/www/index.html && exec busybox httpd -f -p 8080 -h /tmp/www']);
  return `
job "${name}" {
  datacenters = ["dc1"]
  group "g" {
    network {
      mode     = "bridge"
      hostname = "dgn-web"
      port "http" {
        to = 8080
      }
      dns {
        servers = ["192.0.2.77"]
      }
    }
    task "web" {
      driver = "docker"
      config {
        image   = "${BUSYBOX_IMAGE}"
        command = "/bin/sh"
        args    = ${web}
      }
      kill_timeout = "1s"
    }
    task "peer" {
      driver = "exec"
      config {
        command = "python3"
        args    = ${JSON.stringify(['-c', PEER_SCRIPT])}
      }
      kill_timeout = "1s"
    }
  }
}
`;
}

async function taskLog(address: string, allocId: string, task: string): Promise<string> {
  const res = await api(address, 'GET', `/v1/client/fs/cat/${allocId}?path=${encodeURIComponent(`alloc/logs/${task}.stdout.0`)}`);
  return res.status === 200 ? res.text : '';
}

async function fetchText(url: string): Promise<string> {
  const res = await fetch(url, { signal: AbortSignal.timeout(5_000) });
  return (await res.text()).trim();
}

interface Inspect {
  Id: string;
  Name: string;
  State: { Running: boolean };
  HostConfig: { NetworkMode: string };
}

async function inspect(d: PrivateDockerd, ref: string): Promise<Inspect | null> {
  const r = await engineCall(d.socket, 'GET', `/containers/${encodeURIComponent(ref)}/json`);
  return r.status === 200 ? (JSON.parse(r.text) as Inspect) : null;
}

let web: Allocation | undefined;
let pauseId = '';

test('a docker task in bridge mode joins the pause container: reached through its mapped host port, and over 127.0.0.1 by an exec task of its group', async () => {
  const { agent: a, dockerd: d } = ready();
  await runJob(a.address, jobsDir, 'shared', sharedJob('shared'));
  const [stub] = await waitRunning(a.address, 'shared', 1, 120_000);
  web = await getAlloc(a.address, stub!.ID);
  const port = web.AllocatedResources?.Shared.Ports?.find((p) => p.Label === 'http')?.Value;
  assert.ok(port, JSON.stringify(web.AllocatedResources?.Shared));
  assert.ok(web.NetworkStatus?.Address.startsWith(bridge.subnet.replace('0/24', '')), JSON.stringify(web.NetworkStatus));
  assert.ok(netnsNames().includes(web.ID), 'the namespace is named after the allocation');

  // One pause container per allocation, Nomad's name, and the task container joins it.
  const pause = await inspect(d, `nomad_init_${web.ID}`);
  assert.ok(pause?.State.Running, 'the pause container runs');
  pauseId = pause.Id;
  const task = (await listContainers(d)).find((c) => c.Labels['com.hashicorp.nomad.alloc_id'] === web!.ID && c.Labels['com.hashicorp.nomad.task_name'] === 'web');
  assert.ok(task, 'the web task container');
  assert.equal((await inspect(d, task.Id))?.HostConfig.NetworkMode, `container:${pauseId}`);

  // From the host, through the mapped port (portmap in the pause container's namespace).
  assert.equal(await waitFor('docker web via host port', () => fetchText(`http://127.0.0.1:${port}/`).catch(() => undefined), 20_000), 'hello-docker');
  // The exec task shares the namespace: it reached the docker server on 127.0.0.1:8080.
  const peer = await waitFor('peer output', async () => ((await taskLog(a.address, web!.ID, 'peer')).includes('PEER') ? taskLog(a.address, web!.ID, 'peer') : undefined), 30_000);
  assert.match(peer, /^PEER hello-docker$/m, peer);
  // The group's hostname and dns reach the container.
  const out = await taskLog(a.address, web.ID, 'web');
  assert.match(out, /^HOST dgn-web$/m, out);
  assert.match(out, /^nameserver 192\.0\.2\.77$/m, out);
  assert.match(out, /dgn-web/, out);
});

test('kill -9 of the agent and a restart keep the pause container and the docker task reachable', async () => {
  const { agent: a, dockerd: d } = ready();
  assert.ok(web, 'the first test ran');
  const port = web.AllocatedResources!.Shared.Ports!.find((p) => p.Label === 'http')!.Value;
  await a.kill();
  agent = await startAgent({ roleArgs: ['-dev'], dataDir, readyTimeoutMs: 120_000, port: a.port, extraArgs: ['-config', configFile] });
  const again = await waitFor('alloc running after restart', async () => {
    const x = await getAlloc(agent!.address, web!.ID);
    return x.ClientStatus === 'running' && x.NetworkStatus?.Address ? x : undefined;
  }, 90_000);
  assert.equal(again.NetworkStatus?.Address, web.NetworkStatus?.Address);
  assert.equal((await inspect(d, `nomad_init_${web.ID}`))?.Id, pauseId, 'the same pause container, found again');
  assert.equal(await waitFor('docker web after restart', () => fetchText(`http://127.0.0.1:${port}/`).catch(() => undefined), 20_000), 'hello-docker');
});

test('a stopped allocation with a docker task leaves no pause container, namespace, link or rule', async () => {
  const { agent: a, dockerd: d } = ready();
  assert.ok(web, 'the first test ran');
  assert.ok(rulesMentioning(web.ID).length > 0, 'portmap rules name the allocation while it runs');
  const stop = await api(a.address, 'DELETE', '/v1/job/shared');
  assert.equal(stop.status, 200, stop.text);
  await waitFor('namespace removed', () => (netnsNames().includes(web!.ID) ? undefined : true), 60_000);
  await waitFor('pause container removed', async () => ((await inspect(d, `nomad_init_${web!.ID}`)) ? undefined : true), 30_000);
  assert.deepEqual((await listContainers(d)).filter((c) => c.Labels['com.hashicorp.nomad.alloc_id'] === web!.ID), []);
  assert.deepEqual(bridgePorts(bridge), []);
  assert.deepEqual(rulesMentioning(web.ID), []);
  assert.deepEqual(rulesMentioning(web.NetworkStatus!.Address), []);
});

test('a docker task asking for network_mode = "host" in a bridge group fails naming the option, and leaves no pause container or namespace', async () => {
  const { agent: a, dockerd: d } = ready();
  const hcl = `
job "escape" {
  datacenters = ["dc1"]
  type        = "batch"
  group "g" {
    network {
      mode = "bridge"
    }
    restart {
      attempts = 0
      mode     = "fail"
    }
    task "out" {
      driver = "docker"
      config {
        image        = "${BUSYBOX_IMAGE}"
        command      = "sleep"
        args         = ["60"]
        network_mode = "host"
      }
    }
  }
}
`;
  await runJob(a.address, jobsDir, 'escape', hcl);
  const failed = await waitFor('escape failed', async () => {
    const stubs = (await api<{ ID: string; ClientStatus: string }[]>(a.address, 'GET', '/v1/job/escape/allocations')).body;
    return stubs.find((s) => s.ClientStatus === 'failed');
  }, 90_000);
  const alloc = await getAlloc(a.address, failed.ID);
  const messages = (alloc.TaskStates?.['out']?.Events ?? []).map((e) => `${e.DisplayMessage} ${e.DriverError ?? ''}`).join('\n');
  assert.match(messages, /"network_mode"/, messages);
  await waitFor('escape namespace removed', () => (netnsNames().includes(failed.ID) ? undefined : true), 60_000);
  await waitFor('escape pause container removed', async () => ((await inspect(d, `nomad_init_${failed.ID}`)) ? undefined : true), 30_000);
  assert.deepEqual((await listContainers(d)).filter((c) => c.Labels['com.hashicorp.nomad.alloc_id'] === failed.ID), []);
});
