/**
 * `caravan agent`: runs an agent until SIGINT/SIGTERM. `-dev` runs server and client in one
 * process on 127.0.0.1:4646 with a temporary data dir; `-server`, `-client -servers=…`,
 * `-config FILE` (repeatable), `-data-dir`, `-bind`, `-http-port`, `-node`, `-dc`, `-region`
 * as Nomad's, and `-node-pool`, `-client-intro-token` (or NOMAD_CLIENT_INTRO_TOKEN) for a
 * client; `-etcd-endpoints`, `-etcd-prefix` put a server's log and leadership on etcd. Logs go
 * to stderr (pino); the startup banner to stdout.
 */
import type { Command } from 'commander';
import { pino, destination, multistream, type Level, type Logger } from 'pino';
import { Agent } from '../../agent/agent.js';
import {
  AgentConfigError,
  defaultAgentConfig,
  devLayer,
  mergeConfig,
  validateAgentConfig,
  type AgentConfig,
  type AgentConfigLayer,
} from '../../agent/agent-config.js';
import { AgentRoleError, type RoleFactories } from '../../agent/agent-roles.js';
import { readConfigFile } from '../../agent/config-file.js';
import { defaultRoles } from '../../agent/default-roles.js';
import { CARAVAN_VERSION } from '../../structs/version.js';
import { ExitCode, type CliContext } from '../cli-context.js';
import type { CommandModule } from '../command-registry.js';
import { collect } from './job-file-flags.js';

/** The flags of `caravan agent`. */
export interface AgentFlags {
  dev?: boolean;
  server?: boolean;
  client?: boolean;
  servers?: string;
  config?: string[];
  dataDir?: string;
  bind?: string;
  httpPort?: string;
  node?: string;
  dc?: string;
  region?: string;
  nodeClass?: string;
  nodePool?: string;
  clientIntroToken?: string;
  meta?: string[];
  logLevel?: string;
  bootstrapExpect?: string;
  etcdEndpoints?: string;
  etcdPrefix?: string;
}

/** The configuration layer the command line gives; throws AgentConfigError naming the flag. */
export function flagsLayer(f: AgentFlags): AgentConfigLayer {
  const layer: AgentConfigLayer = {};
  if (f.dataDir !== undefined) layer.dataDir = f.dataDir;
  if (f.bind !== undefined) layer.bindAddr = f.bind;
  if (f.httpPort !== undefined) {
    if (!/^\d+$/.test(f.httpPort)) throw new AgentConfigError('-http-port', `invalid port ${JSON.stringify(f.httpPort)}`);
    layer.ports = { http: Number(f.httpPort) };
  }
  if (f.node !== undefined) layer.name = f.node;
  if (f.dc !== undefined) layer.datacenter = f.dc;
  if (f.region !== undefined) layer.region = f.region;
  if (f.logLevel !== undefined) layer.logLevel = f.logLevel;
  if (f.server) layer.server = { enabled: true };
  if (f.etcdEndpoints !== undefined || f.etcdPrefix !== undefined) {
    const etcd: NonNullable<NonNullable<AgentConfigLayer['server']>['etcd']> = {};
    if (f.etcdEndpoints !== undefined) etcd.endpoints = f.etcdEndpoints.split(',').map((s) => s.trim()).filter((s) => s !== '');
    if (f.etcdPrefix !== undefined) etcd.prefix = f.etcdPrefix;
    layer.server = { ...layer.server, etcd };
  }
  if (f.client || f.servers !== undefined || f.nodeClass !== undefined || f.nodePool !== undefined || f.clientIntroToken !== undefined || (f.meta?.length ?? 0) > 0) {
    layer.client = {};
    if (f.client) layer.client.enabled = true;
    if (f.servers !== undefined) layer.client.servers = f.servers.split(',').map((s) => s.trim()).filter((s) => s !== '');
    if (f.nodeClass !== undefined) layer.client.nodeClass = f.nodeClass;
    if (f.nodePool !== undefined) layer.client.nodePool = f.nodePool;
    if (f.clientIntroToken !== undefined) layer.client.introToken = f.clientIntroToken;
    if (f.meta && f.meta.length > 0) {
      const meta: Record<string, string> = {};
      for (const kv of f.meta) {
        const eq = kv.indexOf('=');
        if (eq <= 0) throw new AgentConfigError('-meta', `expected key=value, got ${JSON.stringify(kv)}`);
        meta[kv.slice(0, eq)] = kv.slice(eq + 1);
      }
      layer.client.meta = meta;
    }
  }
  return layer;
}

/**
 * The introduction token the environment gives (CARAVAN_CLIENT_INTRO_TOKEN, else Nomad's
 * NOMAD_CLIENT_INTRO_TOKEN), which wins over -client-intro-token as Nomad's variable does.
 */
export function envLayer(env: NodeJS.ProcessEnv): AgentConfigLayer {
  const token = env['CARAVAN_CLIENT_INTRO_TOKEN'] ?? env['NOMAD_CLIENT_INTRO_TOKEN'];
  return token !== undefined && token.trim() !== '' ? { client: { introToken: token.trim() } } : {};
}

/** Builds the agent configuration: defaults, -dev, config files in order, flags, then the environment's intro token. */
export async function buildAgentConfig(f: AgentFlags, env: NodeJS.ProcessEnv = {}): Promise<AgentConfig> {
  let config = defaultAgentConfig();
  if (f.dev) config = mergeConfig(config, devLayer());
  for (const file of f.config ?? []) config = mergeConfig(config, await readConfigFile(file));
  config = mergeConfig(config, flagsLayer(f));
  config = mergeConfig(config, envLayer(env));
  return validateAgentConfig(config);
}

function banner(agent: Agent): string {
  const c = agent.config;
  const lines: [string, string][] = [
    ['Advertise Addrs', `HTTP: ${agent.httpAddr}`],
    ['Bind Addrs', `HTTP: [${agent.httpAddr}]`],
    ['Client', String(c.client.enabled)],
    ['Data Dir', agent.dataDir],
    ['Log Level', c.logLevel.toUpperCase()],
    ['Node Id', agent.nodeId() || '<none>'],
    ['Region', `${c.region} (DC: ${c.datacenter})`],
    ['Server', String(c.server.enabled)],
    ['Version', CARAVAN_VERSION],
  ];
  const width = Math.max(...lines.map(([k]) => k.length));
  return lines.map(([k, v]) => `${k.padStart(width + 7)}: ${v}`).join('\n');
}

/** Waits for SIGINT or SIGTERM, then resolves with the signal's name. */
function untilSignal(): Promise<string> {
  return new Promise((resolve) => {
    const on = (sig: NodeJS.Signals) => {
      process.off('SIGINT', on);
      process.off('SIGTERM', on);
      resolve(sig);
    };
    process.on('SIGINT', on);
    process.on('SIGTERM', on);
  });
}

/** Runs the agent until a signal; returns the exit code. `roles` is injectable for tests. */
export async function runAgent(ctx: CliContext, f: AgentFlags, roles: RoleFactories = defaultRoles, stop: Promise<string> = untilSignal()): Promise<number> {
  let config: AgentConfig;
  try {
    config = await buildAgentConfig(f, ctx.env);
  } catch (err) {
    if (err instanceof AgentConfigError) {
      ctx.stderr.write(`==> Error loading configuration: ${err.message}\n`);
      return ExitCode.Error;
    }
    throw err;
  }
  // On a multistream, so /v1/agent/monitor can follow the lines (src/http/log-monitor.ts). As
  // Nomad's, `monitor -log-level debug` sees debug lines of an agent that writes info: the logger
  // produces debug and up, and only its stderr stream keeps the configured level.
  const logDest = destination({ fd: 2, sync: false });
  const configured = config.logLevel as Level;
  const produced: Level = configured === 'trace' ? 'trace' : 'debug';
  const logger: Logger = pino({ level: produced, base: { agent: config.name } }, multistream([{ level: configured, stream: logDest }]));
  for (const file of config.files) ctx.stdout.write(`==> Loaded configuration from ${file}\n`);
  ctx.stdout.write('==> Starting Caravan agent...\n');
  let agent: Agent;
  try {
    agent = await Agent.start(config, roles, logger);
  } catch (err) {
    const msg = err instanceof AgentRoleError ? `${err.role}: ${err.message}` : err instanceof Error ? err.message : String(err);
    ctx.stderr.write(`==> Error starting agent: ${msg}\n`);
    logDest.flush();
    return ExitCode.Error;
  }
  ctx.stdout.write(`==> Caravan agent configuration:\n\n${banner(agent)}\n\n`);
  ctx.stdout.write(`==> Caravan agent started! Log data will stream in below:\n`);
  ctx.stdout.write(`    HTTP API listening on ${agent.config.tls.http ? 'https' : 'http'}://${agent.httpAddr}\n`);
  const sig = await stop;
  ctx.stdout.write(`==> Caught signal: ${sig.toLowerCase().replace(/^sig/, '')}\n==> Gracefully shutting down agent...\n`);
  await agent.shutdown();
  logDest.flush();
  return ExitCode.Ok;
}

/** Registers `agent`. */
export const agentCommand: CommandModule = {
  register(program: Command, ctx: CliContext): void {
    program
      .command('agent')
      .description('Run a Caravan agent (server, client, or both with -dev)')
      .option('--dev', 'server and client in one process, in-memory-like temporary data dir, loopback')
      .option('--server', 'enable the server role')
      .option('--client', 'enable the client role')
      .option('--servers <addrs>', 'comma-separated server addresses (host:port) for a client')
      .option('--config <file>', 'an agent configuration file (HCL or JSON; repeatable)', collect, [])
      .option('--data-dir <dir>', 'data directory')
      .option('--bind <addr>', 'address to bind the HTTP API to')
      .option('--http-port <port>', 'HTTP API port (default 4646)')
      .option('--node <name>', 'node name (default: the hostname)')
      .option('--dc <dc>', 'datacenter (default dc1)')
      .option('--region <region>', 'region (default global)')
      .option('--node-class <class>', 'node class of the client')
      .option('--node-pool <pool>', 'node pool of the client (default "default")')
      .option('--client-intro-token <jwt>', 'the introduction token the client presents when it first registers (see `node intro create`)')
      .option('--meta <key=value>', 'client node metadata (repeatable)', collect, [])
      .option('--log-level <level>', 'trace, debug, info, warn or error')
      .option('--etcd-endpoints <urls>', 'comma-separated etcd client URLs: the server keeps its log and leadership in etcd (several servers)')
      .option('--etcd-prefix <prefix>', 'key prefix of this cluster in etcd (default /caravan/)')
      .action(async (opts: AgentFlags) => {
        ctx.exitCode = await runAgent(ctx, opts);
      });
  },
};
