/**
 * A private Docker daemon for tests: Debian's dockerd started by the test itself with its own
 * socket, data root and exec root under a short temp dir (containerd's socket path limit), no
 * iptables, no bridge and no IP forwarding (the host's settings stay untouched), stopped by pid.
 * Images are made locally — no registry is reachable — by importing a rootfs tarball holding
 * Debian's static busybox.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, closeSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';

/** The busybox image every docker test uses. */
export const BUSYBOX_IMAGE = 'caravan-busybox:test';

/** A running private daemon. */
export interface PrivateDockerd {
  /** The daemon's socket path. */
  socket: string;
  /** `unix://<socket>`, for the plugin's `endpoint`. */
  endpoint: string;
  root: string;
  pid: number;
  /** The daemon's log so far. */
  log(): string;
  /** Stops the daemon (SIGTERM, then SIGKILL), unmounts and removes its directories. */
  stop(): Promise<void>;
}

function findBusybox(): string {
  for (const p of ['/bin/busybox', '/usr/bin/busybox']) if (existsSync(p)) return p;
  throw new Error('busybox-static is not installed (apt-get install busybox-static): the docker tests import it as their image');
}

function findDockerd(): string {
  const r = spawnSync('sh', ['-c', 'command -v dockerd'], { encoding: 'utf8' });
  const p = r.stdout.trim();
  if (!p) throw new Error('dockerd is not installed (apt-get install docker.io): the docker driver tests need a real engine');
  return p;
}

/** One Engine API call on a unix socket. */
export function engineCall(socket: string, method: string, path: string, body?: Buffer | object): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const data = body === undefined ? undefined : Buffer.isBuffer(body) ? body : Buffer.from(JSON.stringify(body));
    const headers: Record<string, string> = {};
    if (data) {
      headers['Content-Type'] = Buffer.isBuffer(body) ? 'application/x-tar' : 'application/json';
      headers['Content-Length'] = String(data.length);
    }
    const r = request({ socketPath: socket, method, path, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    r.on('error', reject);
    r.end(data);
  });
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

function exited(proc: ChildProcess): boolean {
  return proc.exitCode !== null || proc.signalCode !== null;
}

function waitExit(proc: ChildProcess, ms: number): Promise<boolean> {
  if (exited(proc)) return Promise.resolve(true);
  return new Promise((resolve) => {
    const t = setTimeout(() => resolve(false), ms);
    proc.once('exit', () => {
      clearTimeout(t);
      resolve(true);
    });
  });
}

/** Mount points under `dir` (overlay layers, container mounts), deepest first. */
function mountsUnder(dir: string): string[] {
  const out: string[] = [];
  for (const line of readFileSync('/proc/self/mounts', 'utf8').split('\n')) {
    const target = line.split(' ')[1]?.replace(/\\040/g, ' ');
    if (target && (target === dir || target.startsWith(`${dir}/`))) out.push(target);
  }
  return out.sort((a, b) => b.length - a.length);
}

/** Where Debian's gVisor runtime lives, when installed (apt-get install runsc). */
export function findRunsc(): string | null {
  const p = spawnSync('sh', ['-c', 'command -v runsc'], { encoding: 'utf8' }).stdout.trim();
  return p || null;
}

/**
 * Starts a private dockerd and resolves once it answers /_ping. Throws with its log if it cannot
 * start. When Debian's runsc is installed it is registered as runtime "runsc" (ptrace platform,
 * no network stack: Debian's 2022 build needs `--network=none` for containers without a network).
 */
export async function startPrivateDockerd(): Promise<PrivateDockerd> {
  const dockerd = findDockerd();
  const root = mkdtempSync('/tmp/cdk-');
  const runsc = findRunsc();
  const daemonJson = join(root, 'daemon.json');
  writeFileSync(daemonJson, JSON.stringify(runsc ? { runtimes: { runsc: { path: runsc, runtimeArgs: ['--platform=ptrace', '--network=none'] } } } : {}));
  const socket = join(root, 'sock');
  const logPath = join(root, 'log');
  const logFd = openSync(logPath, 'a');
  const args = [
    '--data-root', join(root, 'data'),
    '--exec-root', join(root, 'exec'),
    '--pidfile', join(root, 'pid'),
    '-H', `unix://${socket}`,
    '--iptables=false', '--ip6tables=false', '--ip-forward=false', '--ip-masq=false',
    '--bridge=none', '--userland-proxy=false',
    '--storage-driver=overlay2',
    '--shutdown-timeout=2',
    '--config-file', daemonJson,
  ];
  const proc = spawn(dockerd, args, { stdio: ['ignore', logFd, logFd], detached: true });
  closeSync(logFd);
  const log = () => {
    try {
      return readFileSync(logPath, 'utf8');
    } catch {
      return '';
    }
  };
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    if (!exited(proc)) {
      proc.kill('SIGTERM');
      if (!(await waitExit(proc, 20_000))) {
        proc.kill('SIGKILL');
        await waitExit(proc, 5_000);
      }
    }
    // A containerd the daemon started dies with it; make sure, by the pid it recorded.
    const cpid = join(root, 'exec', 'containerd', 'containerd.pid');
    if (existsSync(cpid)) {
      const pid = Number(readFileSync(cpid, 'utf8').trim());
      if (pid > 0) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // already gone
        }
      }
    }
    for (const m of mountsUnder(root)) spawnSync('umount', ['-l', m]);
    rmSync(root, { recursive: true, force: true });
  };
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (exited(proc)) {
      const text = log();
      await stop();
      throw new Error(`private dockerd exited during start (code ${proc.exitCode}, signal ${proc.signalCode}):\n${text.slice(-3000)}`);
    }
    if (existsSync(socket)) {
      const ok = await engineCall(socket, 'GET', '/_ping').then((r) => r.status === 200, () => false);
      if (ok) break;
    }
    if (Date.now() > deadline) {
      const text = log();
      await stop();
      throw new Error(`private dockerd did not answer /_ping within 30 s:\n${text.slice(-3000)}`);
    }
    await sleep(50);
  }
  return { socket, endpoint: `unix://${socket}`, root, pid: proc.pid!, log, stop };
}

/** Imports a rootfs of Debian's static busybox (sh, sleep, echo, cat, …) as image `tag`; `changes` are Dockerfile lines (e.g. CMD). */
export async function importBusybox(d: PrivateDockerd, tag = BUSYBOX_IMAGE, changes: string[] = []): Promise<void> {
  const rootfs = join(d.root, 'rootfs');
  for (const dir of ['bin', 'tmp', 'etc', 'proc', 'sys', 'dev', 'alloc', 'local', 'secrets']) mkdirSync(join(rootfs, dir), { recursive: true });
  chmodSync(join(rootfs, 'tmp'), 0o1777);
  copyFileSync(findBusybox(), join(rootfs, 'bin', 'busybox'));
  chmodSync(join(rootfs, 'bin', 'busybox'), 0o755);
  for (const cmd of ['sh', 'sleep', 'echo', 'cat', 'ls', 'id', 'true', 'false', 'dd', 'head', 'tr', 'printf', 'env', 'hostname', 'pwd', 'kill', 'wc', 'yes', 'stty', 'uname']) {
    symlinkSync('busybox', join(rootfs, 'bin', cmd));
  }
  const tar = spawnSync('tar', ['-C', rootfs, '-cf', '-', '.'], { maxBuffer: 64 * 1024 * 1024 });
  if (tar.status !== 0) throw new Error(`tar of the busybox rootfs failed: ${tar.stderr.toString()}`);
  rmSync(rootfs, { recursive: true, force: true });
  const [repo, t] = tag.split(':');
  const extra = changes.map((c) => `&changes=${encodeURIComponent(c)}`).join('');
  const res = await engineCall(d.socket, 'POST', `/images/create?fromSrc=-&repo=${encodeURIComponent(repo!)}&tag=${encodeURIComponent(t ?? 'latest')}${extra}`, tar.stdout);
  if (res.status !== 200 || res.text.includes('"error')) throw new Error(`importing busybox failed: ${res.status} ${res.text}`);
}

/** A stand-in for Nomad's pause image (no registry is reachable): busybox sleeping forever. */
export const PAUSE_IMAGE = 'caravan-pause:test';

/** Imports PAUSE_IMAGE, for the docker plugin's `infra_image`. */
export function importPauseImage(d: PrivateDockerd): Promise<void> {
  return importBusybox(d, PAUSE_IMAGE, ['CMD ["/bin/sleep", "infinity"]']);
}

/** Containers of the daemon (all, running or not) with their labels. */
export async function listContainers(d: PrivateDockerd): Promise<Array<{ Id: string; Names: string[]; State: string; Labels: Record<string, string> }>> {
  const r = await engineCall(d.socket, 'GET', '/containers/json?all=1');
  return JSON.parse(r.text) as Array<{ Id: string; Names: string[]; State: string; Labels: Record<string, string> }>;
}
