/**
 * Test fixtures for the client routes: a fake ClientHttpApi over temporary allocation
 * directories (exec runs real commands with /bin/sh), an agent listening on a loopback port,
 * and a websocket exec helper that collects the frames of one session.
 */
import { mkdtempSync, mkdirSync, rmSync } from 'node:fs';
import { get as httpGet, type ClientRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { WebSocket } from 'ws';
import { FsIsolation, type DriverCapabilities, type ExecSpec, type TaskResourceUsage } from '../../src/drivers/driver.js';
import { ClientApiError, ClientApiErrorCode } from '../../src/http/client-api-error.js';
import type { ClientHttpApi } from '../../src/http/client-http-api.js';
import { createHttpServer, type HttpServerOptions } from '../../src/http/http-server.js';
import { encodeExecInput, parseExecOutput, type ExecInputFrame } from '../../src/http/exec/exec-frames.js';

/** A client holding allocations in temp dirs; records restarts and signals. */
export class FakeAllocClient implements ClientHttpApi {
  readonly dirs = new Map<string, string>();
  readonly tasks = new Map<string, string[]>();
  readonly calls: { method: string; args: unknown[] }[] = [];
  private readonly root = mkdtempSync(join(tmpdir(), 'caravan-client-test-'));

  constructor(private readonly id = 'node-client') {}

  nodeId(): string {
    return this.id;
  }

  /** Creates an allocation directory with alloc/logs and one dir per task. */
  addAlloc(allocId: string, tasks: string[] = ['web']): string {
    const dir = join(this.root, allocId);
    mkdirSync(join(dir, 'alloc', 'logs'), { recursive: true });
    for (const t of tasks) mkdirSync(join(dir, t, 'local'), { recursive: true });
    this.dirs.set(allocId, dir);
    this.tasks.set(allocId, tasks);
    return dir;
  }

  /** Makes `alias` (e.g. an ID the real scheduler chose) name the same allocation directory and tasks as `allocId`. */
  aliasAlloc(allocId: string, alias: string): void {
    this.dirs.set(alias, this.dirs.get(allocId)!);
    this.tasks.set(alias, this.tasks.get(allocId)!);
  }

  hasAlloc(allocId: string): boolean {
    return this.dirs.has(allocId);
  }

  allocDir(allocId: string): string | undefined {
    return this.dirs.get(allocId);
  }

  private taskOf(allocId: string, task: string): string {
    const tasks = this.tasks.get(allocId);
    if (!tasks) throw new ClientApiError(ClientApiErrorCode.AllocNotFound, `Unknown allocation "${allocId}"`);
    if (!tasks.includes(task)) throw new ClientApiError(ClientApiErrorCode.TaskNotFound, `task "${task}" not found in allocation`);
    return join(this.dirs.get(allocId)!, task);
  }

  execSpec(allocId: string, task: string, command: string[]): ExecSpec {
    const cwd = this.taskOf(allocId, task);
    return { file: command[0]!, args: command.slice(1), cwd, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', TERM: 'xterm' } };
  }

  /** The fake runs commands as a plain host process: no isolation. */
  taskDriverCapabilities(allocId: string, task: string): DriverCapabilities {
    this.taskOf(allocId, task);
    return { fsIsolation: FsIsolation.None };
  }

  async restartAlloc(allocId: string, task?: string): Promise<void> {
    if (task !== undefined) this.taskOf(allocId, task);
    else if (!this.dirs.has(allocId)) throw new ClientApiError(ClientApiErrorCode.AllocNotFound, 'unknown allocation');
    this.calls.push({ method: 'restartAlloc', args: [allocId, task] });
  }

  async signalAlloc(allocId: string, task: string | undefined, signal: string): Promise<void> {
    if (task !== undefined) this.taskOf(allocId, task);
    this.calls.push({ method: 'signalAlloc', args: [allocId, task, signal] });
  }

  async allocStats(allocId: string): Promise<Record<string, TaskResourceUsage>> {
    const out: Record<string, TaskResourceUsage> = {};
    for (const t of this.tasks.get(allocId) ?? []) {
      out[t] = { timestamp: 1_700_000_000_000_000_000, memoryRssBytes: 1024 * 1024, cpuTotalTicks: 12.5, cpuPercent: 1.5, pids: [42] };
    }
    return out;
  }

  // The client routes below are tested through a real agent (test/integration/client-routes.test.ts).
  hostStats(): never {
    throw new ClientApiError(ClientApiErrorCode.AllocNotFound, 'no host stats in the fake client');
  }

  collectAlloc(allocId: string): Promise<void> {
    return Promise.reject(new ClientApiError(ClientApiErrorCode.AllocNotFound, `Unknown allocation "${allocId}"`));
  }

  collectAllAllocs(): Promise<number> {
    return Promise.resolve(0);
  }

  nodeMeta(): { Meta: Record<string, string>; Dynamic: Record<string, string | null>; Static: Record<string, string> } {
    return { Meta: {}, Dynamic: {}, Static: {} };
  }

  applyNodeMeta(): Promise<never> {
    return Promise.reject(new ClientApiError(ClientApiErrorCode.MetaInvalid, 'no node meta in the fake client'));
  }

  cleanup(): void {
    rmSync(this.root, { recursive: true, force: true });
  }
}

/** An agent listening on 127.0.0.1 with a random port. */
export interface RunningAgent {
  app: FastifyInstance;
  baseUrl: string;
  wsUrl: string;
  hostPort: string;
  close(): Promise<void>;
}

/** Starts createHttpServer(opts) on a loopback port. */
export async function startAgent(opts: HttpServerOptions): Promise<RunningAgent> {
  const app = createHttpServer(opts);
  await app.listen({ host: '127.0.0.1', port: 0 });
  const addr = app.server.address();
  if (addr === null || typeof addr === 'string') throw new Error('no address');
  const hostPort = `127.0.0.1:${addr.port}`;
  return { app, baseUrl: `http://${hostPort}`, wsUrl: `ws://${hostPort}`, hostPort, close: () => app.close() };
}

/** What one exec session produced. */
export interface ExecResult {
  stdout: string;
  stderr: string;
  exitCode: number | undefined;
  closeCode: number;
  closeReason: string;
}

/**
 * Runs an exec session: connects, sends `inputs` (a function may wait for output before
 * sending), and resolves when the socket closes.
 */
export function runExec(
  wsUrl: string,
  allocId: string,
  query: { task?: string; command?: string[] | string; tty?: boolean },
  script?: (send: (f: ExecInputFrame) => void, output: () => string) => Promise<void>,
): Promise<ExecResult> {
  const params = new URLSearchParams();
  if (query.task !== undefined) params.set('task', query.task);
  if (query.command !== undefined) params.set('command', typeof query.command === 'string' ? query.command : JSON.stringify(query.command));
  if (query.tty !== undefined) params.set('tty', String(query.tty));
  const ws = new WebSocket(`${wsUrl}/v1/client/allocation/${allocId}/exec?${params}`);
  const out: ExecResult = { stdout: '', stderr: '', exitCode: undefined, closeCode: 0, closeReason: '' };
  ws.on('message', (data) => {
    const f = parseExecOutput(data.toString());
    if (f.stdout?.data) out.stdout += Buffer.from(f.stdout.data, 'base64').toString();
    if (f.stderr?.data) out.stderr += Buffer.from(f.stderr.data, 'base64').toString();
    if (f.exited && f.result) out.exitCode = f.result.exit_code;
  });
  if (script) {
    ws.on('open', () => {
      script((f) => ws.send(encodeExecInput(f)), () => out.stdout).catch((err: unknown) => ws.close(4000, String(err)));
    });
  }
  return new Promise((resolve, reject) => {
    ws.on('error', reject);
    ws.on('close', (code, reason) => {
      out.closeCode = code;
      out.closeReason = reason.toString();
      resolve(out);
    });
  });
}

/** Polls `cond` every 10 ms until true or `ms` elapse (for waiting on streamed output). */
export async function until(cond: () => boolean, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Base64 of a string, for stdin frames. */
export function b64(s: string): string {
  return Buffer.from(s).toString('base64');
}

/** A streaming GET whose body accumulates as it arrives; close() drops the connection. */
export interface StreamingGet {
  status: Promise<number>;
  body(): string;
  close(): void;
}

/** Opens a streaming GET with node:http (no connection pool, so closing really closes). */
export function streamingGet(url: string): StreamingGet {
  let body = '';
  let req: ClientRequest;
  const status = new Promise<number>((resolve, reject) => {
    req = httpGet(url, { agent: false }, (res) => {
      resolve(res.statusCode ?? 0);
      res.on('data', (d: Buffer) => {
        body += d.toString();
      });
      res.on('error', () => {});
    });
    req.on('error', (err) => reject(err));
  });
  status.catch(() => {});
  return { status, body: () => body, close: () => req.destroy() };
}
