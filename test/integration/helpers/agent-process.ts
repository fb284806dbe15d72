/**
 * Real `caravan agent` processes for integration tests: started on a free loopback port with
 * a temporary data dir, ready once /v1/agent/health answers, stopped with SIGTERM (graceful)
 * or SIGKILL (crash). Also runs the `caravan` CLI against such an agent.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { killDataDirProcesses } from './processes.js';
import { readFileSync } from 'node:fs';
import { tlsFetch } from '../../../src/tls/tls-fetch.js';
import WebSocket from 'ws';

/** The repository root (dist/test/integration/helpers → four levels up). */
export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../../..');
/** The caravan entry point. */
export const CARAVAN_BIN = join(REPO_ROOT, 'bin/caravan.js');

/** A free TCP port on 127.0.0.1 (bound, read, released). */
export function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolvePort(port));
    });
  });
}

/** Options of startAgent. */
export interface StartAgentOptions {
  /** Role flags, e.g. ['-server'] or ['-dev'] (default ['-server']). */
  roleArgs?: string[];
  /** Reuse a data dir (restart after a crash); default a new temporary one. */
  dataDir?: string;
  /** Reuse a port (restart); default a free one. */
  port?: number;
  /** Extra arguments. */
  extraArgs?: string[];
  /** How long to wait for health (ms, default 20 s). */
  readyTimeoutMs?: number;
  /**
   * Enable the raw_exec driver through a config file (default true: most tests run raw_exec jobs;
   * it is off in a non-dev agent unless its config enables it, as Nomad's).
   */
  rawExec?: boolean;
  /**
   * Enable the mock driver through a config file (default false): a non-dev agent offers it only
   * when its config says so, since its exec runs commands on the host.
   */
  mockDriver?: boolean;
  /**
   * The server's min_heartbeat_ttl (e.g. "1h"), for tests that register nodes through the API
   * and never heartbeat them: with the default 10 s such a node is marked down when a loaded
   * machine stretches the test past its TTL and grace, and nothing can be placed on it.
   */
  minHeartbeatTtl?: string;
  /** Leave out `-bind 127.0.0.1` (the agent's own default applies). */
  noBind?: boolean;
  /** The agent serves HTTPS (its config has a `tls` block): health is checked with this CA and client certificate. */
  https?: { ca: string; cert?: string; key?: string };
  /** Extra environment of the agent process (e.g. NODE_OPTIONS to cap its heap). */
  env?: NodeJS.ProcessEnv;
}

/** The agent config file that enables raw_exec, written into the data dir. */
async function rawExecConfig(dataDir: string): Promise<string> {
  await mkdir(dataDir, { recursive: true });
  const file = join(dataDir, 'raw-exec.hcl');
  await writeFile(file, 'plugin "raw_exec" {\n  config {\n    enabled = true\n  }\n}\n');
  return file;
}

/** The agent config file that enables the mock driver, written into the data dir. */
async function mockDriverConfig(dataDir: string): Promise<string> {
  await mkdir(dataDir, { recursive: true });
  const file = join(dataDir, 'mock-driver.hcl');
  await writeFile(file, 'plugin "mock_driver" {\n  config {\n    enabled = true\n  }\n}\n');
  return file;
}

async function heartbeatConfig(dataDir: string, minTtl: string): Promise<string> {
  await mkdir(dataDir, { recursive: true });
  const file = join(dataDir, 'heartbeat.hcl');
  await writeFile(file, `server {\n  min_heartbeat_ttl = ${JSON.stringify(minTtl)}\n}\n`);
  return file;
}

/** A running agent process. */
export interface AgentProcess {
  proc: ChildProcess;
  port: number;
  /** "http://127.0.0.1:<port>". */
  address: string;
  dataDir: string;
  /** Everything the process wrote so far. */
  output(): { stdout: string; stderr: string };
  /** SIGTERM and wait for exit; resolves the exit code (null when killed by a signal). */
  stop(): Promise<number | null>;
  /** SIGKILL and wait for exit. */
  kill(): Promise<void>;
  /** Removes the data dir (call after stop/kill when the dir is not reused). */
  cleanup(): Promise<void>;
}

function waitExit(proc: ChildProcess): Promise<number | null> {
  if (proc.exitCode !== null || proc.signalCode !== null) return Promise.resolve(proc.exitCode);
  return new Promise((r) => proc.once('exit', (code) => r(code)));
}

async function waitHealthy(address: string, proc: ChildProcess, timeoutMs: number, output: () => { stdout: string; stderr: string }, fetchFn: typeof fetch = fetch): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastErr = '';
  while (Date.now() < deadline) {
    if (proc.exitCode !== null || proc.signalCode !== null) {
      const o = output();
      throw new Error(`agent exited early (code ${proc.exitCode}, signal ${proc.signalCode})\nstdout:\n${o.stdout}\nstderr:\n${o.stderr}`);
    }
    try {
      const res = await fetchFn(`${address}/v1/agent/health`);
      if (res.status === 200) return;
      lastErr = `status ${res.status}: ${await res.text()}`;
    } catch (err) {
      lastErr = (err as Error).message;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  proc.kill('SIGKILL');
  throw new Error(`agent at ${address} not healthy after ${timeoutMs} ms: ${lastErr}`);
}

/** Starts `caravan agent` and resolves once it answers /v1/agent/health with 200. */
export async function startAgent(opts: StartAgentOptions = {}): Promise<AgentProcess> {
  const dataDir = opts.dataDir ?? (await mkdtemp(join(tmpdir(), 'caravan-it-')));
  const port = opts.port ?? (await freePort());
  const rawExec = opts.rawExec === false ? [] : ['-config', await rawExecConfig(dataDir)];
  const mock = opts.mockDriver === true ? ['-config', await mockDriverConfig(dataDir)] : [];
  const heartbeat = opts.minHeartbeatTtl ? ['-config', await heartbeatConfig(dataDir, opts.minHeartbeatTtl)] : [];
  const args = [CARAVAN_BIN, 'agent', ...(opts.roleArgs ?? ['-server']), ...rawExec, ...mock, ...heartbeat, ...(opts.noBind ? [] : ['-bind', '127.0.0.1']), '-http-port', String(port), '-data-dir', dataDir, '-log-level', 'debug', ...(opts.extraArgs ?? [])];
  const proc = spawn(process.execPath, args, { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'], ...(opts.env ? { env: { ...process.env, ...opts.env } } : {}) });
  let stdout = '';
  let stderr = '';
  proc.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  proc.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const output = () => ({ stdout, stderr });
  const address = `${opts.https ? 'https' : 'http'}://127.0.0.1:${port}`;
  const h = opts.https;
  const fetchFn = h ? tlsFetch({ ca: readFileSync(h.ca), ...(h.cert && h.key ? { cert: readFileSync(h.cert), key: readFileSync(h.key) } : {}) }) : fetch;
  await waitHealthy(address, proc, opts.readyTimeoutMs ?? 20_000, output, fetchFn);
  return {
    proc,
    port,
    address,
    dataDir,
    output,
    async stop() {
      proc.kill('SIGTERM');
      return waitExit(proc);
    },
    async kill() {
      proc.kill('SIGKILL');
      await waitExit(proc);
    },
    async cleanup() {
      // Tasks and the supervisor outlive the agent by design: kill what this data dir left.
      await killDataDirProcesses(dataDir);
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** The result of one CLI run. */
export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `caravan <args>` against `address` (CARAVAN_ADDR) and collects its output; `input` is its stdin. */
export function runCli(address: string, args: string[], opts: { cwd?: string; timeoutMs?: number; env?: NodeJS.ProcessEnv; input?: string } = {}): Promise<CliResult> {
  return new Promise((resolveRun, reject) => {
    const proc = spawn(process.execPath, [CARAVAN_BIN, ...args], {
      cwd: opts.cwd ?? REPO_ROOT,
      env: { ...process.env, CARAVAN_ADDR: address, NOMAD_ADDR: '', ...opts.env },
      stdio: [opts.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    });
    if (opts.input !== undefined) proc.stdin!.end(opts.input);
    let stdout = '';
    let stderr = '';
    proc.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    proc.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(() => {
      proc.kill('SIGKILL');
      reject(new Error(`caravan ${args.join(' ')} timed out\nstdout:\n${stdout}\nstderr:\n${stderr}`));
    }, opts.timeoutMs ?? 60_000);
    proc.on('exit', (code) => {
      clearTimeout(timer);
      resolveRun({ code, stdout, stderr });
    });
  });
}

/** One HTTP answer: status, body (parsed when JSON) and the raw text. */
export interface Answer<T = unknown> {
  status: number;
  body: T;
  text: string;
}

/** A JSON API call with a token in X-Nomad-Token (none: anonymous) and extra headers. */
export async function call<T = unknown>(address: string, method: string, path: string, token?: string, body?: unknown, headers: Record<string, string> = {}): Promise<Answer<T>> {
  const res = await fetch(`${address}${path}`, {
    method,
    headers: { ...(token ? { 'X-Nomad-Token': token } : {}), ...headers },
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // plain-text answer
  }
  return { status: res.status, body: parsed as T, text };
}

/** A JSON API call against an agent; resolves status, body (parsed when JSON) and index. */
export async function api<T = unknown>(address: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: T; text: string; index: number }> {
  const res = await fetch(`${address}${path}`, {
    method,
    ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body), headers: { 'Content-Type': 'application/json' } } : {}),
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // plain-text error bodies stay text
  }
  return { status: res.status, body: parsed as T, text, index: Number(res.headers.get('x-nomad-index') ?? 0) };
}

/** The outcome of one exec over the websocket: stdout, and how the socket closed. */
export interface ExecOnce {
  stdout: string;
  code: number;
  reason: string;
}

/** One exec of `command` in `task` over the exec websocket, stdin closed at once; rejects after 20 s. */
export function execOnce(address: string, allocId: string, command: string[], headers: Record<string, string> = {}, task = 't'): Promise<ExecOnce> {
  const q = new URLSearchParams({ task, command: JSON.stringify(command), tty: 'false' });
  const ws = new WebSocket(`${address.replace(/^http/, 'ws')}/v1/client/allocation/${allocId}/exec?${q}`, { headers });
  return new Promise((resolve, reject) => {
    let stdout = '';
    const timer = setTimeout(() => {
      ws.terminate();
      reject(new Error('exec timed out'));
    }, 20_000);
    ws.on('open', () => ws.send(JSON.stringify({ stdin: { close: true } })));
    ws.on('message', (d) => {
      const f = JSON.parse(String(d)) as { stdout?: { data?: string } };
      if (f.stdout?.data) stdout += Buffer.from(f.stdout.data, 'base64').toString('utf8');
    });
    ws.on('close', (code, reason) => {
      clearTimeout(timer);
      resolve({ stdout, code, reason: String(reason) });
    });
    ws.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
  });
}
