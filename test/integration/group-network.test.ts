/**
 * Group networking with a real dev agent: bridge-mode allocations get a namespace of their own on
 * the test's bridge, their ports mapped from the host; mode "none" has only its loopback; two
 * allocations map the same `to` port; an exec task gets the `dns` block's resolv.conf and the
 * network's hostname; an agent killed with -9 and restarted keeps the network of running
 * allocations; a stopped allocation leaves no namespace, link or rule behind.
 *
 * Needs root, iproute2, iptables, nsenter and Debian's containernetworking-plugins: without
 * them the first test fails saying what is missing (CI installs them).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Allocation } from '../../src/structs/index.js';
import { api, startAgent, type AgentProcess } from './helpers/agent-process.js';
import { getAlloc, runJob, teardown, waitFor, waitRunning } from './helpers/client-agent.js';
import { bridgeConfigFile, bridgePorts, hostAddress, netnsNames, removeTestBridge, requireGroupNetworking, rulesMentioning, testBridge, writeCniConflist, type TestBridge } from './helpers/group-network.js';

let agent: AgentProcess | undefined;
let dataDir: string;
let jobsDir: string;
let configFile: string;
let bridge: TestBridge;
/** The bridge of the `cni/cvtestnet` network (an operator's conflist in cni_config_dir). */
let cniBridge: TestBridge;
let setupError: Error | null = null;

before(async () => {
  try {
    requireGroupNetworking();
  } catch (err) {
    setupError = err as Error;
    return;
  }
  bridge = testBridge();
  do cniBridge = testBridge();
  while (cniBridge.subnet === bridge.subnet);
  cniBridge.name = `${cniBridge.name.slice(0, 13)}c`;
  dataDir = await mkdtemp('/tmp/cv-gn-');
  jobsDir = await mkdtemp('/tmp/cv-gn-jobs-');
  await mkdir(join(jobsDir, 'cni'));
  await writeCniConflist(join(jobsDir, 'cni'), 'cvtestnet', cniBridge);
  configFile = await bridgeConfigFile(jobsDir, bridge, join(jobsDir, 'cni'));
  agent = await startAgent({ roleArgs: ['-dev'], dataDir, readyTimeoutMs: 120_000, extraArgs: ['-config', configFile] });
});

after(async () => {
  if (setupError) return;
  await teardown(agent, dataDir);
  removeTestBridge(bridge);
  removeTestBridge(cniBridge);
  await rm(jobsDir, { recursive: true, force: true });
});

function ready(): AgentProcess {
  if (setupError) throw setupError;
  return agent!;
}

/** A bridge-mode service: a static HTTP server on NOMAD_PORT_http (the `to` port) answering `body`. */
function webJob(name: string, body: string, count = 1): string {
  return `
job "${name}" {
  datacenters = ["dc1"]
  group "g" {
    count = ${count}
    network {
      mode = "bridge"
      port "http" {
        to = 8080
      }
    }
    task "web" {
      driver = "raw_exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "mkdir -p local/www && echo ${body} > local/www/index.html && exec python3 -m http.server \${NOMAD_PORT_http} --bind 0.0.0.0 -d local/www"]
      }
    }
  }
}
`;
}

/** A batch job in `mode` whose raw_exec task runs a Python script with `args`; its stdout is read back. */
function probeJob(name: string, mode: string, script: string, args: string[]): string {
  const argList = JSON.stringify(['-c', script, ...args]);
  return `
job "${name}" {
  datacenters = ["dc1"]
  type        = "batch"
  group "g" {
    network {
      mode = "${mode}"
    }
    restart {
      attempts = 0
      mode     = "fail"
    }
    task "probe" {
      driver = "raw_exec"
      config {
        command = "python3"
        args    = ${argList}
      }
    }
  }
}
`;
}

/** Fetches every URL given (2 s each) and prints "<url> <status or error>" per line; exits 0. */
const FETCH_SCRIPT = `
import sys, urllib.request
for url in sys.argv[1:]:
    try:
        with urllib.request.urlopen(url, timeout=2) as r:
            print(url, r.status, r.read().decode().strip())
    except Exception as e:
        print(url, 'ERR', type(e).__name__)
`;

/** Prints the namespace's interfaces, then tries TCP to every host:port given. */
const REACH_SCRIPT = `
import sys, socket, subprocess
print('LINKS', ' '.join(l.split(': ')[1].split('@')[0] for l in subprocess.run(['ip', '-o', 'link', 'show'], capture_output=True, text=True).stdout.splitlines()))
for target in sys.argv[1:]:
    host, port = target.rsplit(':', 1)
    s = socket.socket()
    s.settimeout(2)
    try:
        s.connect((host, int(port)))
        print(target, 'CONNECTED')
    except Exception as e:
        print(target, 'REFUSED', type(e).__name__)
    finally:
        s.close()
`;

async function runningAlloc(address: string, job: string, n = 1): Promise<Allocation[]> {
  const stubs = await waitRunning(address, job, n, 90_000);
  return Promise.all(stubs.map((s) => getAlloc(address, s.ID)));
}

function hostPort(a: Allocation, label: string): number {
  const p = a.AllocatedResources?.Shared.Ports?.find((x) => x.Label === label);
  assert.ok(p, `alloc ${a.ID} has no port ${label}: ${JSON.stringify(a.AllocatedResources?.Shared)}`);
  return p.Value;
}

async function finishedOutput(address: string, job: string, task: string): Promise<string> {
  const alloc = await waitFor(`${job} finished`, async () => {
    const stubs = (await api<{ ID: string; ClientStatus: string }[]>(address, 'GET', `/v1/job/${job}/allocations`)).body;
    return stubs.find((s) => s.ClientStatus === 'complete' || s.ClientStatus === 'failed');
  }, 90_000);
  const out = await api(address, 'GET', `/v1/client/fs/cat/${alloc.ID}?path=${encodeURIComponent(`alloc/logs/${task}.stdout.0`)}`);
  const err = await api(address, 'GET', `/v1/client/fs/cat/${alloc.ID}?path=${encodeURIComponent(`alloc/logs/${task}.stderr.0`)}`);
  assert.equal(alloc.ClientStatus, 'complete', `${job}: ${out.text}\n${err.text}`);
  return out.text;
}

async function fetchText(url: string): Promise<string> {
  const res = await fetch(url, { signal: AbortSignal.timeout(5_000) });
  return (await res.text()).trim();
}

test('a bridge-mode web server is reached through its mapped host port from the host and from another allocation', async () => {
  const a = ready();
  await runJob(a.address, jobsDir, 'web', webJob('web', 'hello-bridge'));
  const [web] = await runningAlloc(a.address, 'web');
  const port = hostPort(web!, 'http');
  const address = web!.NetworkStatus?.Address ?? '';
  assert.ok(address.startsWith(bridge.subnet.replace('0/24', '')), `alloc address ${address} in ${bridge.subnet}`);
  assert.equal(web!.NetworkStatus?.InterfaceName, 'eth0');
  assert.ok(netnsNames().includes(web!.ID), 'the namespace is named after the allocation');

  // From the host: loopback, the host's own address, and the allocation's address on `to`.
  const host = hostAddress();
  for (const url of [`http://127.0.0.1:${port}/`, `http://${host}:${port}/`, `http://${address}:8080/`]) {
    assert.equal(await waitFor(url, () => fetchText(url), 10_000), 'hello-bridge', url);
  }
  // The server listens in its namespace only: the host's 8080 is not it.
  await assert.rejects(fetch('http://127.0.0.1:8080/', { signal: AbortSignal.timeout(2_000) }));

  // From another bridge allocation: the host's address and mapped port, and the server's own address.
  await runJob(a.address, jobsDir, 'client', probeJob('client', 'bridge', FETCH_SCRIPT, [`http://${host}:${port}/`, `http://${address}:8080/`]));
  const out = await finishedOutput(a.address, 'client', 'probe');
  assert.match(out, new RegExp(`http://${host.replace(/\./g, '\\.')}:${port}/ 200 hello-bridge`), out);
  assert.match(out, new RegExp(`http://${address.replace(/\./g, '\\.')}:8080/ 200 hello-bridge`), out);
});

test('tasks get the port variables as Nomad: host port, alloc port (to) and the allocation address', async () => {
  const a = ready();
  const script = 'import os; print(" ".join(f"{k}={os.environ[k]}" for k in sorted(os.environ) if k.endswith("_http")))';
  await runJob(a.address, jobsDir, 'envs', probeJob('envs', 'bridge', script, []).replace('mode = "bridge"', 'mode = "bridge"\n      port "http" {\n        to = 9090\n      }'));
  const out = await finishedOutput(a.address, 'envs', 'probe');
  assert.match(out, /NOMAD_PORT_http=9090/, out);
  assert.match(out, /NOMAD_ALLOC_PORT_http=9090/, out);
  assert.match(out, /NOMAD_HOST_PORT_http=\d+/, out);
  assert.match(out, new RegExp(`NOMAD_ALLOC_IP_http=${bridge.subnet.replace('0/24', '').replace(/\./g, '\\.')}\\d+`), out);
  assert.match(out, /NOMAD_ALLOC_ADDR_http=172\.31\.\d+\.\d+:9090/, out);
  assert.match(out, /NOMAD_HOST_ADDR_http=[\d.]+:\d+/, out);
});

test('a "none" allocation has only its loopback and reaches nothing else', async () => {
  const a = ready();
  const [web] = await runningAlloc(a.address, 'web');
  const port = hostPort(web!, 'http');
  const host = hostAddress();
  await runJob(a.address, jobsDir, 'isolated', probeJob('isolated', 'none', REACH_SCRIPT, [`${host}:${port}`, `127.0.0.1:${a.port}`, `${host}:${a.port}`, `${web!.NetworkStatus!.Address}:8080`]));
  const out = await finishedOutput(a.address, 'isolated', 'probe');
  assert.match(out, /^LINKS lo$/m, out);
  assert.doesNotMatch(out, /CONNECTED/, out);
});

test('two allocations map the same `to` port on one node, each on its own host port', async () => {
  const a = ready();
  await runJob(a.address, jobsDir, 'twins', webJob('twins', 'hello-twin', 2));
  const allocs = await runningAlloc(a.address, 'twins', 2);
  const ports = allocs.map((x) => hostPort(x, 'http'));
  assert.notEqual(ports[0], ports[1]);
  for (const x of allocs) assert.equal(x.AllocatedResources?.Shared.Ports?.[0]?.To, 8080);
  for (const p of ports) assert.equal(await waitFor(`twin on ${p}`, () => fetchText(`http://127.0.0.1:${p}/`), 10_000), 'hello-twin');
});

test('an exec task joins the namespace with the dns block as its resolv.conf and the network hostname', async () => {
  const a = ready();
  const hcl = `
job "named" {
  datacenters = ["dc1"]
  type        = "batch"
  group "g" {
    network {
      mode     = "bridge"
      hostname = "web-one"
      dns {
        servers  = ["192.0.2.53"]
        searches = ["caravan.test"]
        options  = ["ndots:2"]
      }
    }
    task "probe" {
      driver = "exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "cat /etc/resolv.conf; echo HOST $(hostname); grep web-one /etc/hosts; ip -o -4 addr show eth0 | grep -o 'inet [0-9.]*'"]
      }
    }
  }
}
`;
  await runJob(a.address, jobsDir, 'named', hcl);
  const out = await finishedOutput(a.address, 'named', 'probe');
  assert.match(out, /^nameserver 192\.0\.2\.53$/m, out);
  assert.match(out, /^search caravan\.test$/m, out);
  assert.match(out, /^options ndots:2$/m, out);
  assert.match(out, /^HOST web-one$/m, out);
  assert.match(out, /inet 172\.31\./, out);
});

test('a cni/<name> network comes from the conflist of that name in cni_config_dir, its port mapped', async () => {
  const a = ready();
  await runJob(a.address, jobsDir, 'cniweb', webJob('cniweb', 'hello-cni').replace('mode = "bridge"', 'mode = "cni/cvtestnet"'));
  const [web] = await runningAlloc(a.address, 'cniweb');
  assert.ok(web!.NetworkStatus?.Address.startsWith(cniBridge.subnet.replace('0/24', '')), JSON.stringify(web!.NetworkStatus));
  assert.equal(bridgePorts(cniBridge).length, 1, 'the allocation is on the conflist\'s bridge');
  const port = hostPort(web!, 'http');
  assert.equal(await waitFor('cni web', () => fetchText(`http://127.0.0.1:${port}/`), 10_000), 'hello-cni');
  const stop = await api(a.address, 'DELETE', '/v1/job/cniweb');
  assert.equal(stop.status, 200, stop.text);
  await waitFor('cni namespace removed', () => (netnsNames().includes(web!.ID) ? undefined : true), 90_000);
  assert.deepEqual(bridgePorts(cniBridge), []);
  assert.deepEqual(rulesMentioning(web!.ID), []);
});

test('kill -9 of the agent and a restart keep the network of running allocations', async () => {
  const a = ready();
  const [web] = await runningAlloc(a.address, 'web');
  const port = hostPort(web!, 'http');
  await a.kill();
  agent = await startAgent({ roleArgs: ['-dev'], dataDir, readyTimeoutMs: 120_000, port: a.port, extraArgs: ['-config', configFile] });
  assert.equal(await waitFor('web after restart', () => fetchText(`http://127.0.0.1:${port}/`), 10_000), 'hello-bridge');
  const again = await waitFor('alloc reported running after restart', async () => {
    const x = await getAlloc(agent!.address, web!.ID);
    return x.ClientStatus === 'running' && x.NetworkStatus?.Address ? x : undefined;
  }, 90_000);
  assert.equal(again.NetworkStatus?.Address, web!.NetworkStatus?.Address);
  assert.ok(netnsNames().includes(web!.ID));
});

test('a stopped allocation leaves no namespace, link or rule behind', async () => {
  const a = ready();
  const [web] = await runningAlloc(a.address, 'web');
  const address = web!.NetworkStatus!.Address;
  // The host side of the namespace's eth0 (eth0@if<index>); warm namespaces may come and go beside it.
  const peer = /eth0@if(\d+)/.exec(execFileSync('ip', ['-n', web!.ID, '-o', 'link', 'show', 'eth0'], { encoding: 'utf8' }))?.[1];
  assert.ok(peer, 'eth0 has a peer on the host');
  assert.ok(bridgePorts(bridge).some((l) => l.startsWith(`${peer}:`)), 'the peer is on the bridge');
  // Rules name the CNI container ID: the allocation's, or the warm namespace's it took.
  assert.ok(rulesMentioning(`${address}:`).length > 0, 'portmap forwards to the allocation while it runs');
  const stop = await api(a.address, 'DELETE', '/v1/job/web');
  assert.equal(stop.status, 200, stop.text);
  await waitFor('web namespace removed', () => (netnsNames().includes(web!.ID) ? undefined : true), 30_000);
  await waitFor('web veth removed', () => (bridgePorts(bridge).some((l) => l.startsWith(`${peer}:`)) ? undefined : true), 10_000);
  assert.deepEqual(rulesMentioning(web!.ID), []);
  assert.deepEqual(rulesMentioning(`${address}/32`), []);
  assert.deepEqual(rulesMentioning(`${address}:`), []);
});

test('an agent that stops removes its warm namespaces and leaves nothing on the bridge', async () => {
  const a = ready();
  // A bridge allocation in this agent process starts its warm namespaces.
  await runJob(a.address, jobsDir, 'last', webJob('last', 'hello-last'));
  await runningAlloc(a.address, 'last');
  await waitFor('warm namespaces', () => (netnsNames().some((n) => n.startsWith('cvwarm-')) ? true : undefined), 30_000);
  await a.stop();
  assert.deepEqual(netnsNames().filter((n) => n.startsWith('cvwarm-')), []);
  assert.deepEqual(bridgePorts(bridge), []);
  assert.deepEqual(rulesMentioning('cvwarm-'), []);
});
