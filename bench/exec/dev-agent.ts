/**
 * A throwaway `caravan agent -dev` for benchmarks run without an address: started on a free
 * loopback port with a short temporary data dir (unix socket paths are length-limited), ready
 * once /v1/agent/health answers, stopped with SIGTERM and its data dir removed.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root (dist/bench/exec → three levels up). */
const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

/** A running benchmark agent. */
export interface BenchAgent {
  addr: string;
  stop(): Promise<void>;
}

function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const srv = createServer();
    srv.on('error', rej);
    srv.listen(0, '127.0.0.1', () => {
      const a = srv.address();
      const port = typeof a === 'object' && a ? a.port : 0;
      srv.close(() => res(port));
    });
  });
}

/** Starts `caravan agent -dev` and resolves once it is healthy (throws after 20 s). */
export async function startDevAgent(): Promise<BenchAgent> {
  const dataDir = mkdtempSync('/tmp/cvb-');
  const port = await freePort();
  const proc = spawn(process.execPath, [join(REPO_ROOT, 'bin/caravan.js'), 'agent', '-dev', '-bind', '127.0.0.1', '-http-port', String(port), '-data-dir', dataDir, '-log-level', 'warn'], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  proc.stderr.setEncoding('utf8').on('data', (d: string) => (stderr = (stderr + d).slice(-4000)));
  const addr = `http://127.0.0.1:${port}`;
  const stop = async (): Promise<void> => {
    if (proc.exitCode === null && proc.signalCode === null) {
      const exited = new Promise((r) => proc.once('exit', r));
      proc.kill('SIGTERM');
      await exited;
    }
    rmSync(dataDir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    if (proc.exitCode !== null) break;
    try {
      if ((await fetch(`${addr}/v1/agent/health`)).status === 200) return { addr, stop };
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  await stop();
  throw new Error(`dev agent did not become healthy: ${stderr}`);
}
