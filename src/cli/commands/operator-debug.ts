/**
 * `caravan operator debug [-duration 2m] [-interval 30s] [-output DIR] [-node-id all|ID,…]
 * [-server-id all|leader|NAME,…] [-max-nodes 10] [-node-class C] [-log-level DEBUG]
 * [-pprof-duration 1s] [-pprof-interval 250ms] [-stale] [-verbose]`, as Nomad's: collects a
 * debug bundle in Nomad's layout — the cluster's state (`cluster/`, and `interval/<nnnn>/` every
 * -interval), each chosen server's and client's log for -duration (`monitor.log`), host facts
 * and runtime profiles (Node.js's, see debug/agent-profile.ts: the `.cpuprofile`,
 * `.heapsnapshot` and `.heapprofile` open in Chrome DevTools) — then packs it as
 * `caravan-debug-<time>.tar.gz` in the current directory, or leaves the directory under -output.
 * Exit 1 on a bad flag or an unreachable cluster, 2 when the bundle cannot be written; a
 * profile an agent refuses (no agent:write, no enable_debug) is reported and skipped, as Nomad.
 */
import { appendFileSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Command } from 'commander';
import { DurationParseError, NANOS_PER_MS, parseDuration } from '../../structs/duration.js';
import type { ApiClient, ApiQuery } from '../api-client.js';
import { ExitCode, type CliContext } from '../cli-context.js';
import { commandGroup, type CommandModule } from '../command-registry.js';
import { DebugCapture } from '../debug/debug-capture.js';
import { writeTarGz } from '../debug/tar-gz.js';
import { CARAVAN_VERSION } from '../../structs/version.js';
import { addApiFlags, apiClient, sanitizeUuidPrefix, type ApiFlags } from './api-command.js';
import { FrameDecoder } from './monitor.js';

interface DebugFlags extends ApiFlags {
  duration: string;
  interval: string;
  output?: string;
  nodeId: string;
  serverId: string;
  maxNodes: string;
  nodeClass?: string;
  logLevel: string;
  pprofDuration: string;
  pprofInterval: string;
  stale?: boolean;
}

/** One agent whose log and profiles go in the bundle: `server/<name>` or `client/<node id>`. */
interface Target {
  dir: 'server' | 'client';
  id: string;
  /** The query that sends an agent route to it. */
  query: ApiQuery;
}

/** The profiles taken once per agent (the CPU profile is taken every -pprof-interval): Nomad's names, Node.js's files. */
const ONCE_PROFILES: readonly { name: string; debug?: number; file: string }[] = [
  { name: 'goroutine', debug: 1, file: 'goroutine-debug1.txt' },
  { name: 'goroutine', debug: 2, file: 'goroutine-debug2.txt' },
  { name: 'goroutine', file: 'goroutine.json' },
  { name: 'trace', file: 'trace.json' },
  { name: 'heap', file: 'heap.heapsnapshot' },
  { name: 'allocs', file: 'allocs.heapprofile' },
  { name: 'threadcreate', file: 'threadcreate.json' },
];

/** Go's time format "2006-01-02-150405Z" of `d` in UTC. */
export function debugTimestamp(d: Date): string {
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getUTCFullYear()}-${p(d.getUTCMonth() + 1)}-${p(d.getUTCDate())}-${p(d.getUTCHours())}${p(d.getUTCMinutes())}${p(d.getUTCSeconds())}Z`;
}

function splitList(s: string): string[] {
  return s.split(',').map((x) => x.trim()).filter((x) => x !== '');
}

/** A flag's duration in ms; undefined after printing Nomad's error. */
function durationFlag(ctx: CliContext, label: string, value: string): number | undefined {
  try {
    return parseDuration(value) / NANOS_PER_MS;
  } catch (err) {
    if (!(err instanceof DurationParseError)) throw err;
    ctx.stderr.write(`Error parsing ${label}: ${value}: ${err.message}\n`);
    return undefined;
  }
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((r) => {
    if (signal.aborted) return r();
    const t = setTimeout(r, ms);
    signal.addEventListener('abort', () => {
      clearTimeout(t);
      r();
    }, { once: true });
  });

/** Runs one collection; returns the exit code. */
async function runDebug(ctx: CliContext, opts: DebugFlags): Promise<number> {
  const duration = durationFlag(ctx, 'duration', opts.duration);
  const interval = durationFlag(ctx, 'interval', opts.interval);
  let pprofDuration = durationFlag(ctx, 'pprof duration', opts.pprofDuration);
  let pprofInterval = durationFlag(ctx, 'pprof-interval', opts.pprofInterval);
  if (duration === undefined || interval === undefined || pprofDuration === undefined || pprofInterval === undefined) return ExitCode.Error;
  if (interval > duration) {
    ctx.stderr.write(`Error parsing interval: ${opts.interval} is greater than duration ${opts.duration}\n`);
    return ExitCode.Error;
  }
  pprofDuration = Math.min(pprofDuration, duration);
  pprofInterval = Math.min(pprofInterval, pprofDuration);
  if (!/^\d+$/.test(opts.maxNodes)) {
    ctx.stderr.write(`Error parsing arguments: invalid value "${opts.maxNodes}" for flag -max-nodes\n`);
    return ExitCode.Error;
  }
  const maxNodes = Number(opts.maxNodes);

  const stamped = `caravan-debug-${debugTimestamp(new Date())}`;
  let dir: string;
  if (opts.output !== undefined) {
    dir = resolve(ctx.cwd, opts.output, stamped);
    if (existsSync(dir)) {
      ctx.stderr.write('Output directory already exists\n');
      return ExitCode.Usage;
    }
  } else {
    dir = mkdtempSync(join(tmpdir(), `${stamped}-`));
  }
  const capture = new DebugCapture(dir);
  try {
    capture.writeJson(['cluster'], 'cli-flags.json', { Name: 'debug', Flags: opts, OsArgs: process.argv.slice(2) });
    const api = apiClient(ctx, opts);
    const q: ApiQuery = opts.stale ? { stale: 'true' } : {};
    const get = async <T>(path: string, query: ApiQuery = {}): Promise<T> => (await api.get<T>(path, { ...q, ...query })).body;

    // Clients: every node (or the prefixes given), at most -max-nodes, of -node-class if given.
    let nodes: { ID: string; NodeClass: string }[];
    try {
      nodes = await get('/v1/nodes');
    } catch (err) {
      ctx.stderr.write(`Error querying node info: ${(err as Error).message}\n`);
      return ExitCode.Error;
    }
    capture.writeJson(['cluster'], 'nodes.json', nodes);
    const nodeIds: string[] = [];
    for (const prefix of splitList(opts.nodeId)) {
      const matching = prefix === 'all' ? nodes : nodes.filter((n) => n.ID.startsWith(sanitizeUuidPrefix(prefix)));
      if (matching.length === 0) ctx.stderr.write(`No node(s) with prefix "${prefix}" found\n`);
      for (const n of matching) {
        if (opts.nodeClass && n.NodeClass !== opts.nodeClass) continue;
        if (maxNodes !== 0 && nodeIds.length >= maxNodes) break;
        if (!nodeIds.includes(n.ID)) nodeIds.push(n.ID);
      }
    }
    if (nodeIds.length === 0 && opts.nodeId !== 'all' && opts.nodeId !== '') {
      ctx.stderr.write(`Failed to retrieve clients, 0 nodes found in list: ${opts.nodeId}\n`);
      return ExitCode.Error;
    }

    // Servers: all, "leader", or names by prefix.
    const members = await get<{ Members: { Name: string }[] }>('/v1/agent/members').catch((err: Error) => err);
    if (members instanceof Error) {
      ctx.stderr.write(`Failed to retrieve server list; err: ${members.message}\n`);
      return ExitCode.Error;
    }
    capture.writeJson(['cluster'], 'members.json', members);
    const leader = await get<string>('/v1/status/leader').catch(() => '');
    if (leader) capture.writeJson(['cluster'], 'leader.json', leader);
    const wanted = splitList(opts.serverId);
    const serverIds = [
      ...(wanted.includes('leader') ? ['leader'] : []),
      ...members.Members.map((m) => m.Name).filter((name) => opts.serverId === 'all' || wanted.some((p) => p !== 'leader' && name.startsWith(p))),
    ];
    if (serverIds.length === 0) {
      ctx.stderr.write(`Failed to retrieve servers, 0 members found in list: ${opts.serverId}\n`);
      return ExitCode.Error;
    }
    const targets: Target[] = [
      ...serverIds.map((id): Target => ({ dir: 'server', id, query: { server_id: id } })),
      ...nodeIds.map((id): Target => ({ dir: 'client', id, query: { node_id: id } })),
    ];

    ctx.stdout.write(
      [
        'Starting debugger...',
        '',
        `Caravan CLI Version: ${CARAVAN_VERSION}`,
        `             Region: ${api.opts.region ?? ''}`,
        `          Namespace: ${api.opts.namespace}`,
        `            Servers: (${serverIds.length}/${members.Members.length}) [${serverIds.join(' ')}]`,
        `            Clients: (${nodeIds.length}/${nodes.length}) [${nodeIds.join(' ')}]`,
        `           Interval: ${opts.interval}`,
        `           Duration: ${opts.duration}`,
        `     pprof Interval: ${opts.pprofInterval}`,
        '',
        'Capturing cluster data...',
        '',
      ].join('\n'),
    );

    const stop = new AbortController();
    const onSignal = () => stop.abort();
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
    // A timer of our own: Node 20 lets an AbortSignal.timeout inside AbortSignal.any be collected unfired.
    const timer = setTimeout(() => stop.abort(), duration);
    const deadline = stop.signal;
    try {
      const monitors = targets.map((t) => captureMonitor(api, capture, t, opts.logLevel, deadline));
      const self = await get('/v1/agent/self').catch((err: Error) => err);
      capture.writeJson(['cluster'], 'agent-self.json', self, self instanceof Error ? self : undefined);
      const namespaces = await get('/v1/namespaces').catch((err: Error) => err);
      capture.writeJson(['cluster'], 'namespaces.json', namespaces, namespaces instanceof Error ? namespaces : undefined);
      const regions = await get('/v1/regions').catch((err: Error) => err);
      capture.writeJson(['cluster'], 'regions.json', regions, regions instanceof Error ? regions : undefined);
      for (const t of targets) {
        const host = await get('/v1/agent/host', t.query).catch((err: Error) => err);
        if (host instanceof Error) ctx.stderr.write(`${t.dir}/${t.id}: Failed to retrieve agent host data, err: ${host.message}\n`);
        else capture.writeJson([t.dir, t.id], 'agent-host.json', host);
      }
      const pprofs = capturePprofs(ctx, api, capture, targets, pprofDuration, pprofInterval, deadline);
      await captureIntervals(ctx, api, capture, q, interval, deadline);
      await Promise.all([pprofs, ...monitors]);
    } finally {
      clearTimeout(timer);
      stop.abort();
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    }
    capture.writeIndex(stamped);
    if (opts.output !== undefined) {
      ctx.stdout.write(`Created debug directory: ${dir}\n`);
      return ExitCode.Ok;
    }
    const archive = resolve(ctx.cwd, `${stamped}.tar.gz`);
    try {
      await writeTarGz(archive, dir, stamped);
    } catch (err) {
      ctx.stderr.write(`Error creating archive: ${(err as Error).message}\n`);
      return ExitCode.Usage;
    }
    ctx.stdout.write(`Created debug archive: ${archive}\n`);
    return ExitCode.Ok;
  } finally {
    if (opts.output === undefined) rmSync(dir, { recursive: true, force: true });
  }
}

/** Follows one agent's log into `<dir>/<id>/monitor.log` until `until` aborts. */
async function captureMonitor(api: ApiClient, capture: DebugCapture, t: Target, logLevel: string, until: AbortSignal): Promise<void> {
  const file = capture.path([t.dir, t.id], 'monitor.log');
  writeFileSync(file, '', { mode: 0o600 });
  try {
    const headers: Record<string, string> = api.opts.token ? { 'X-Nomad-Token': api.opts.token } : {};
    const res = await api.fetchFn(api.url('/v1/agent/monitor', { ...t.query, log_level: logLevel }), { headers, signal: until });
    if (!res.ok || !res.body) {
      appendFileSync(file, `monitor: Unexpected response code: ${res.status} (${(await res.text()).trim()})\n`);
      return;
    }
    const decoder = new FrameDecoder();
    const text = new TextDecoder();
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      for (const line of decoder.push(text.decode(chunk, { stream: true }))) appendFileSync(file, line);
    }
  } catch (err) {
    if (!until.aborted) appendFileSync(file, `monitor: ${(err as Error).message}\n`);
  }
}

/** One profile's bytes, or the error's text. */
async function fetchProfile(api: ApiClient, name: string, query: ApiQuery): Promise<Uint8Array | Error> {
  try {
    const res = await api.fetchRaw('GET', `/v1/agent/pprof/${name}`, query);
    return new Uint8Array(await res.arrayBuffer());
  } catch (err) {
    return err as Error;
  }
}

/**
 * Each agent's profiles: a CPU profile (`profile_<nnnn>.cpuprofile`) every -pprof-interval
 * while the capture runs (one when the interval equals the pprof duration), the others once.
 * The first refusal ("Permission denied") stops an agent's profiles, with Nomad's hint.
 */
async function capturePprofs(ctx: CliContext, api: ApiClient, capture: DebugCapture, targets: Target[], pprofMs: number, intervalMs: number, until: AbortSignal): Promise<void> {
  const seconds = Math.max(1, Math.floor(pprofMs / 1000));
  const refused = new Set<Target>();
  const cpu = async (t: Target, n: number) => {
    const file = `profile_${String(n).padStart(4, '0')}.cpuprofile`;
    const bytes = await fetchProfile(api, 'profile', { ...t.query, seconds });
    if (bytes instanceof Error) {
      ctx.stderr.write(`${file}: Failed to retrieve pprof ${t.dir}/${t.id}, err: ${bytes.message}\n`);
      if (/Permission denied/.test(bytes.message)) {
        ctx.stderr.write('Pprof retrieval requires agent:write ACL or enable_debug=true.  See https://developer.hashicorp.com/nomad/api-docs/agent#agent-runtime-profiles for more information.\n');
        refused.add(t);
      }
      return;
    }
    capture.write([t.dir, t.id], file, bytes);
  };
  ctx.stdout.write('    Capture pprofInterval 0000\n');
  for (const t of targets) {
    await cpu(t, 0);
    if (refused.has(t)) continue;
    for (const p of ONCE_PROFILES) {
      const bytes = await fetchProfile(api, p.name, { ...t.query, ...(p.debug !== undefined ? { debug: p.debug } : {}), seconds });
      if (bytes instanceof Error) ctx.stderr.write(`${t.dir}/${t.id}: Failed to retrieve pprof ${p.file}, err: ${bytes.message}\n`);
      else capture.write([t.dir, t.id], p.file, bytes);
    }
  }
  if (intervalMs >= pprofMs) return;
  for (let n = 1; !until.aborted; n++) {
    await sleep(intervalMs, until);
    if (until.aborted) break;
    ctx.stdout.write(`    Capture pprofInterval ${String(n).padStart(4, '0')}\n`);
    for (const t of targets) if (!refused.has(t)) await cpu(t, n);
  }
}

/** The cluster's state every -interval until the capture ends: `interval/<nnnn>/*.json`. */
async function captureIntervals(ctx: CliContext, api: ApiClient, capture: DebugCapture, q: ApiQuery, intervalMs: number, until: AbortSignal): Promise<void> {
  const lists: [string, string][] = [
    ['jobs.json', '/v1/jobs'],
    ['deployments.json', '/v1/deployments'],
    ['evaluations.json', '/v1/evaluations'],
    ['allocations.json', '/v1/allocations'],
    ['nodes.json', '/v1/nodes'],
    ['csi-plugins.json', '/v1/plugins?type=csi'],
    ['csi-volumes.json', '/v1/volumes?type=csi'],
  ];
  const objects: [string, string][] = [
    ['metrics.json', '/v1/metrics'],
    ['operator-raft.json', '/v1/operator/raft/configuration'],
    ['operator-scheduler.json', '/v1/operator/scheduler/configuration'],
    ['operator-autopilot-health.json', '/v1/operator/autopilot/health'],
    ['license.json', '/v1/operator/license'],
  ];
  for (let n = 0; ; n++) {
    const dir = ['interval', String(n).padStart(4, '0')];
    ctx.stdout.write(`    Capture interval ${dir[1]}\n`);
    for (const [file, path] of lists) {
      const [p, query] = path.split('?') as [string, string | undefined];
      const got = await api.get<unknown[]>(p, { ...q, ...Object.fromEntries(new URLSearchParams(query ?? '')) }).then((r) => r.body, (err: Error) => err);
      capture.writeNdjson(dir, file, got instanceof Error ? undefined : got, got instanceof Error ? got : undefined);
    }
    for (const [file, path] of objects) {
      const got = await api.get<unknown>(path, q).then((r) => r.body, (err: Error) => err);
      capture.writeJson(dir, file, got, got instanceof Error ? got : undefined);
    }
    await sleep(intervalMs, until);
    if (until.aborted) return;
  }
}

/** Registers `operator debug`. */
export const operatorDebugCommand: CommandModule = {
  register(program: Command, ctx: CliContext): void {
    addApiFlags(
      commandGroup(program, 'operator')
        .command('debug')
        .description('Build a debug archive: cluster state, agent logs and runtime profiles')
        .option('--duration <duration>', 'how long to capture logs and state', '2m')
        .option('--interval <duration>', 'time between captures of the cluster state', '30s')
        .option('--output <dir>', 'write the bundle directory here instead of an archive in the current directory')
        .option('--node-id <ids>', 'client node IDs or prefixes, comma separated, or "all"', 'all')
        .option('--server-id <names>', 'server names or prefixes, comma separated, "leader" or "all"', 'all')
        .option('--max-nodes <count>', 'most client nodes to capture (0: no limit)', '10')
        .option('--node-class <class>', 'only client nodes of this class')
        .option('--log-level <level>', 'the level of the captured logs', 'DEBUG')
        .option('--pprof-duration <duration>', 'length of each CPU profile', '1s')
        .option('--pprof-interval <duration>', 'time between CPU profiles', '250ms')
        .option('--stale', 'read from any server, not only the leader'),
    ).action(async (opts: DebugFlags) => {
      ctx.exitCode = await runDebug(ctx, opts);
    });
  },
};
