/**
 * Submit → running of an `exec` task in a bridge-mode group beside the same task in host mode
 * (issue 29: bridge within 2× of host). Starts its own `caravan agent -dev` with a bridge and
 * subnet of the benchmark's own (removed at the end), registers N service jobs of each mode
 * alternately through PUT /v1/jobs, times each from the request until its allocation reports
 * "running" (polled every 10 ms), then purges it. One unmeasured job of each mode runs first: the
 * first bridge allocation of a client sets its bridge up and starts its warm namespaces.
 *
 * With `--nomad ADDR` (e.g. http://127.0.0.1:4646) the same jobs, measured the same way, go to
 * that Nomad agent too (its client needs the CNI plugins for bridge mode and the exec driver),
 * and Nomad's figures are printed beside Caravan's. Nomad cannot be built or installed on the
 * machine this project is developed on (its Go module is not served there), so the figures in
 * docs/group-networking.md are Caravan's only.
 *
 * Usage (root): node dist/bench/network/submit-bridge-vs-host.js [-n N] [--nomad ADDR]   (default 5 per mode)
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBenchAgent } from '../dev-agent.js';
import { percentile } from '../percentile.js';

const BRIDGE = 'cvbench1';
const SUBNET = '172.31.253.0/24';

function job(id: string, mode: 'host' | 'bridge'): unknown {
  return {
    Job: {
      ID: id,
      Name: id,
      Type: 'service',
      Datacenters: ['dc1'],
      TaskGroups: [
        {
          Name: 'g',
          Count: 1,
          Networks: mode === 'bridge' ? [{ Mode: 'bridge', DynamicPorts: [{ Label: 'http', To: 8080 }] }] : [],
          Tasks: [{ Name: 't', Driver: 'exec', Config: { command: '/bin/sleep', args: ['300'] }, Resources: { CPU: 100, MemoryMB: 64 } }],
        },
      ],
    },
  };
}

async function submitToRunning(address: string, id: string, mode: 'host' | 'bridge'): Promise<number> {
  const t0 = performance.now();
  const put = await fetch(`${address}/v1/jobs`, { method: 'PUT', body: JSON.stringify(job(id, mode)) });
  if (!put.ok) throw new Error(`register ${id}: ${put.status} ${await put.text()}`);
  for (;;) {
    const allocs = (await (await fetch(`${address}/v1/job/${id}/allocations`)).json()) as { ClientStatus: string }[];
    if (allocs.some((a) => a.ClientStatus === 'running')) return performance.now() - t0;
    if (allocs.some((a) => a.ClientStatus === 'failed')) throw new Error(`${id}: allocation failed`);
    if (performance.now() - t0 > 120_000) throw new Error(`${id}: not running after 120 s`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** One unmeasured job of each mode, then N of each alternately; each purged once running. */
async function measure(address: string, n: number): Promise<Record<'host' | 'bridge', number[]>> {
  const samples: Record<'host' | 'bridge', number[]> = { host: [], bridge: [] };
  const run = async (id: string, mode: 'host' | 'bridge'): Promise<number> => {
    try {
      return await submitToRunning(address, id, mode);
    } finally {
      await fetch(`${address}/v1/job/${id}?purge=true`, { method: 'DELETE' }).catch(() => undefined);
    }
  };
  for (const mode of ['host', 'bridge'] as const) await run(`warmup-${mode}`, mode);
  for (let i = 0; i < n; i++) for (const mode of ['host', 'bridge'] as const) samples[mode].push(await run(`bench-${mode}-${i}`, mode));
  return samples;
}

/** The --nomad address as an http(s) URL without a trailing slash; a bad one is refused naming the flag. */
function nomadAddress(raw: string | undefined): string {
  if (raw === undefined || raw.startsWith('-')) throw new Error('--nomad needs an address, e.g. http://127.0.0.1:4646');
  let url: URL;
  try {
    url = new URL(/^[a-z]+:\/\//i.test(raw) ? raw : `http://${raw}`);
  } catch {
    throw new Error(`--nomad ${raw}: not an address (want http://host:port)`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`--nomad ${raw}: want an http or https address`);
  return url.origin;
}

async function main(): Promise<void> {
  const nArg = process.argv.indexOf('-n');
  const n = nArg > 0 ? Number(process.argv[nArg + 1]) : 5;
  if (!Number.isInteger(n) || n < 1) throw new Error('-n wants a whole number of jobs per mode (≥ 1)');
  const nomadArg = process.argv.indexOf('--nomad');
  const nomad = nomadArg > 0 ? nomadAddress(process.argv[nomadArg + 1]) : null;
  if (process.getuid?.() !== 0) throw new Error('the benchmark needs root (exec sandboxes, network namespaces)');
  const dir = mkdtempSync(join(tmpdir(), 'cv-netbench-'));
  const config = join(dir, 'network.hcl');
  writeFileSync(config, `client {\n  bridge_network_name   = "${BRIDGE}"\n  bridge_network_subnet = "${SUBNET}"\n  cni_path              = "/usr/lib/cni"\n}\n`);
  let samples: Record<'host' | 'bridge', number[]>;
  // A minute to start: the shared 2-core machine this runs on can be at load 20.
  const agent = await startBenchAgent(['-config', config], 60_000);
  try {
    samples = await measure(agent.address, n);
  } finally {
    await agent.stop();
    spawnSync('iptables', ['-w', '-D', 'INPUT', '-i', BRIDGE, '-d', '127.0.0.0/8', '-m', 'conntrack', '!', '--ctstate', 'RELATED,ESTABLISHED', '-j', 'DROP'], { stdio: 'ignore' });
    spawnSync('iptables', ['-w', '-D', 'NOMAD-ADMIN', '-o', BRIDGE, '-d', SUBNET, '-j', 'ACCEPT'], { stdio: 'ignore' });
    spawnSync('ip', ['link', 'delete', BRIDGE], { stdio: 'ignore' });
    rmSync(dir, { recursive: true, force: true });
  }
  // Nomad after Caravan's agent has stopped: the two never share the machine's CPUs.
  const nomadSamples = nomad ? await measure(nomad, n) : null;
  const median = (xs: number[]) => percentile([...xs].sort((a, b) => a - b), 50);
  console.log(`submit → running of an exec task, ${n} jobs per mode (goal: bridge ≤ 2× host); load average ${loadavg().map((x) => x.toFixed(1)).join(' ')} at ${new Date().toISOString()}`);
  const print = (who: string, s: Record<'host' | 'bridge', number[]>): void => {
    const host = median(s.host);
    const bridge = median(s.bridge);
    console.log(`  ${who.padEnd(7)} host median ${host.toFixed(0)} ms, bridge median ${bridge.toFixed(0)} ms  (${(bridge / host).toFixed(2)}× host: ${bridge <= 2 * host ? 'within' : 'OVER'} the 2× goal)`);
  };
  print('caravan', samples);
  if (nomadSamples) print(`nomad (${nomad})`, nomadSamples);
  else console.log('  nomad   not measured (no --nomad ADDR given)');
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : String(err));
  process.exit(1);
});
