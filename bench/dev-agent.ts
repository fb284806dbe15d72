/**
 * A throwaway `caravan agent -dev` for the client and exec benchmarks: started on a free loopback port with a
 * short data dir (/tmp/cv-XXXX keeps the supervisor's socket path short), healthy before it
 * resolves, and stopped with every process of its data dir killed and the dir removed.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** dist/bench → the repository root. */
const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** A running benchmark agent. */
export interface BenchAgent {
  address: string;
  dataDir: string;
  proc: ChildProcess;
  /** SIGTERM the agent, SIGKILL whatever is left of its data dir, remove the dir. */
  stop(): Promise<void>;
}

function freePort(): Promise<number> {
  return new Promise((ok, fail) => {
    const srv = createServer();
    srv.on('error', fail);
    srv.listen(0, '127.0.0.1', () => {
      const a = srv.address();
      srv.close(() => ok(typeof a === 'object' && a ? a.port : 0));
    });
  });
}

/** PIDs whose environment or command line mention `dataDir` (tasks and the supervisor). */
export function dataDirPids(dataDir: string): number[] {
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      const env = readFileSync(`/proc/${name}/environ`, 'utf8');
      const cmd = readFileSync(`/proc/${name}/cmdline`, 'utf8');
      if (env.includes(dataDir) || cmd.includes(dataDir)) out.push(Number(name));
    } catch {
      // gone
    }
  }
  return out;
}

/**
 * Starts a dev agent and resolves once /v1/agent/health answers 200 and the node is ready
 * (within `readyTimeoutMs`, default 20 s; on a loaded shared machine a start can take longer).
 */
export async function startBenchAgent(extraArgs: string[] = [], readyTimeoutMs = 20_000): Promise<BenchAgent> {
  const dataDir = mkdtempSync('/tmp/cv-');
  const port = await freePort();
  const proc = spawn(process.execPath, [join(REPO_ROOT, 'bin/caravan.js'), 'agent', '-dev', '-bind', '127.0.0.1', '-http-port', String(port), '-data-dir', dataDir, '-log-level', 'warn', ...extraArgs], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const address = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + readyTimeoutMs;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`agent exited early with code ${proc.exitCode}`);
    if (Date.now() > deadline) {
      proc.kill('SIGKILL');
      rmSync(dataDir, { recursive: true, force: true });
      throw new Error(`agent at ${address} not ready after ${readyTimeoutMs / 1000} s`);
    }
    try {
      const h = await fetch(`${address}/v1/agent/health`);
      const nodes = h.ok ? ((await (await fetch(`${address}/v1/nodes`)).json()) as { Status: string }[]) : [];
      if (nodes.some((n) => n.Status === 'ready')) break;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    address,
    dataDir,
    proc,
    async stop() {
      if (proc.exitCode === null && proc.signalCode === null) {
        const exited = new Promise((r) => proc.once('exit', r));
        proc.kill('SIGTERM');
        await exited;
      }
      for (const pid of dataDirPids(dataDir)) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // already gone
        }
      }
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
