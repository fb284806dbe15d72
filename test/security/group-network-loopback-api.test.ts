/**
 * A bridge-mode allocation attacks the agent's HTTP API, which listens on the host's loopback
 * only: through its own 127.0.0.1 (its namespace's loopback, not the host's), through the
 * bridge gateway and the host's address (nothing listens there), and — as root in its
 * namespace, as a raw_exec task is — by routing 127.0.0.0/8 through the gateway after flushing
 * its own loopback (the portmap plugin turns route_localnet on for the bridge, so without the
 * client's guard rule the host takes such packets: a UDP datagram reaches a service bound to
 * 127.0.0.1). Every attempt must fail and no datagram may arrive.
 *
 * Needs root, iproute2, iptables, nsenter and the CNI plugins (fails saying what is missing).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { createSocket } from 'node:dgram';
import { api, startAgent, type AgentProcess } from '../integration/helpers/agent-process.js';
import { runJob, teardown, waitFor } from '../integration/helpers/client-agent.js';
import { bridgeConfigFile, hostAddress, removeTestBridge, requireGroupNetworking, testBridge, type TestBridge } from '../integration/helpers/group-network.js';

let agent: AgentProcess | undefined;
let dataDir: string;
let jobsDir: string;
let bridge: TestBridge;
let setupError: Error | null = null;

before(async () => {
  try {
    requireGroupNetworking();
  } catch (err) {
    setupError = err as Error;
    return;
  }
  bridge = testBridge();
  dataDir = await mkdtemp('/tmp/cv-gnsec-');
  jobsDir = await mkdtemp('/tmp/cv-gnsec-jobs-');
  agent = await startAgent({ roleArgs: ['-dev'], dataDir, readyTimeoutMs: 120_000, extraArgs: ['-config', await bridgeConfigFile(jobsDir, bridge)] });
});

after(async () => {
  if (setupError) return;
  await teardown(agent, dataDir);
  removeTestBridge(bridge);
  await rm(jobsDir, { recursive: true, force: true });
});

/** Tries a GET of /v1/agent/self at every host:port given; prints "<target> ANSWERED|FAILED". */
const ATTACK = `
import sys, socket, subprocess
def attempt(target):
    host, port = target.rsplit(':', 1)
    s = socket.socket()
    s.settimeout(2)
    try:
        s.connect((host, int(port)))
        s.sendall(b'GET /v1/agent/self HTTP/1.0\\r\\nHost: x\\r\\n\\r\\n')
        data = s.recv(64)
        print(target, 'ANSWERED' if data else 'FAILED', data[:20])
    except Exception as e:
        print(target, 'FAILED', type(e).__name__)
    finally:
        s.close()
gateway, port, udp_port = sys.argv[1], sys.argv[2], sys.argv[3]
for t in sys.argv[4:]:
    attempt(t)
# Root in its namespace: drop its own loopback and send 127.0.0.0/8 to the gateway.
cmds = [['ip', 'addr', 'flush', 'dev', 'lo'],
        ['ip', 'route', 'add', '127.0.0.0/8', 'via', gateway, 'dev', 'eth0']]
for c in cmds:
    r = subprocess.run(c, capture_output=True, text=True)
    print('ROUTE', ' '.join(c[1:3]), r.returncode, r.stderr.strip())
with open('/proc/sys/net/ipv4/conf/eth0/route_localnet', 'w') as f:
    f.write('1')
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(5):
    u.sendto(b'from-the-namespace', ('127.0.0.1', int(udp_port)))
print('UDP sent')
attempt('127.0.0.1:' + port)
`;

test('a bridge allocation cannot reach the agent API on the host loopback', async () => {
  if (setupError) throw setupError;
  const a = agent!;
  const host = hostAddress();
  // A host service on loopback only (UDP: one datagram delivered is already a breach).
  const received: string[] = [];
  const udp = createSocket('udp4');
  udp.on('message', (m) => received.push(m.toString()));
  await new Promise<void>((r) => udp.bind(0, '127.0.0.1', r));
  const udpPort = udp.address().port;
  const args = [bridge.gateway, String(a.port), String(udpPort), `127.0.0.1:${a.port}`, `${bridge.gateway}:${a.port}`, `${host}:${a.port}`];
  const hcl = `
job "attack" {
  datacenters = ["dc1"]
  type        = "batch"
  group "g" {
    network {
      mode = "bridge"
      # A mapped port: the portmap plugin then turns route_localnet on for the bridge.
      port "http" {
        to = 8080
      }
    }
    restart {
      attempts = 0
      mode     = "fail"
    }
    task "probe" {
      driver = "raw_exec"
      config {
        command = "python3"
        args    = ${JSON.stringify(['-c', ATTACK, ...args])}
      }
    }
  }
}
`;
  await runJob(a.address, jobsDir, 'attack', hcl);
  const alloc = await waitFor('attack finished', async () => {
    const stubs = (await api<{ ID: string; ClientStatus: string }[]>(a.address, 'GET', '/v1/job/attack/allocations')).body;
    return stubs.find((s) => s.ClientStatus === 'complete' || s.ClientStatus === 'failed');
  }, 60_000);
  const out = (await api(a.address, 'GET', `/v1/client/fs/cat/${alloc.ID}?path=${encodeURIComponent('alloc/logs/probe.stdout.0')}`)).text;
  assert.equal(alloc.ClientStatus, 'complete', out);
  // The route change itself worked (the attack was really tried) …
  assert.match(out, /^ROUTE route add 0/m, out);
  assert.match(out, /^UDP sent$/m, out);
  await new Promise((r) => setTimeout(r, 1_000));
  udp.close();
  assert.deepEqual(received, [], 'a datagram from the namespace reached a service bound to the host loopback');
  // … and no attempt got an answer from the agent.
  const attempts = out.split('\n').filter((l) => /^\S+:\d+ /.test(l));
  assert.equal(attempts.length, 4, out);
  for (const l of attempts) assert.match(l, / FAILED /, out);
  // The agent is fine and still answers on its loopback.
  assert.equal((await api(a.address, 'GET', '/v1/agent/self')).status, 200);
});
