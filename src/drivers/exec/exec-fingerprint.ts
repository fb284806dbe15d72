/**
 * Whether this host can run exec tasks, proven rather than assumed: root, the sandbox tools on
 * PATH, a cgroup hierarchy we can create task cgroups in, and one real sandbox (namespaces,
 * a read-only root, a joined cgroup) that runs `true`. The reason is reported when any fails, as
 * the driver's health description.
 */
import { execFile } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import { detectCgroupSystem, type CgroupSystem } from './cgroups.js';
import type { SandboxTools } from './sandbox-command.js';

export type ExecSupport = { ok: true; tools: SandboxTools; cgroups: CgroupSystem } | { ok: false; reason: string };

const SEARCH_PATH = ['/usr/local/sbin', '/usr/local/bin', '/usr/sbin', '/usr/bin', '/sbin', '/bin'];

function which(name: string): string | undefined {
  const dirs = [...(process.env['PATH'] ?? '').split(delimiter), ...SEARCH_PATH].filter((d) => d !== '');
  for (const d of dirs) {
    const p = join(d, name);
    try {
      accessSync(p, constants.X_OK);
      return p;
    } catch {
      // next
    }
  }
  return undefined;
}

function run(file: string, args: string[]): Promise<{ code: number; stderr: string }> {
  return new Promise((resolve) => {
    execFile(file, args, { timeout: 10_000 }, (err, _stdout, stderr) => {
      const code = err ? (typeof (err as NodeJS.ErrnoException & { code?: unknown }).code === 'number' ? Number((err as { code: number }).code) : 1) : 0;
      resolve({ code, stderr: String(stderr).trim() });
    });
  });
}

let cached: Promise<ExecSupport> | null = null;

/** Probes once per process (the answer does not change while the agent runs). */
export function probeExecSupport(): Promise<ExecSupport> {
  cached ??= probe();
  return cached;
}

async function probe(): Promise<ExecSupport> {
  if (process.platform !== 'linux') return { ok: false, reason: 'exec needs Linux (namespaces and cgroups)' };
  if (process.geteuid?.() !== 0) return { ok: false, reason: 'exec needs the agent to run as root (namespaces, cgroups, switching to the task user)' };
  const tools: Partial<SandboxTools> = { sh: which('sh'), bwrap: which('bwrap'), setpriv: which('setpriv'), nsenter: which('nsenter') };
  const missing = Object.entries(tools).filter(([, v]) => v === undefined).map(([k]) => k);
  if (missing.length > 0) {
    return { ok: false, reason: `exec needs ${missing.join(', ')} on PATH (Debian packages bubblewrap, util-linux)` };
  }
  // Optional: terminal sessions get a terminal of the sandbox's own with it (sandbox-command.ts).
  const script = which('script');
  if (script !== undefined) tools.script = script;
  let cgroups: CgroupSystem;
  try {
    cgroups = detectCgroupSystem();
  } catch (err) {
    return { ok: false, reason: `exec needs cgroups: ${(err as Error).message}` };
  }
  const name = `probe-${process.pid}`;
  let cg;
  try {
    cg = cgroups.create(name, { memoryBytes: 64 * 1024 * 1024, memorySoftBytes: 0, cpuShares: 100, cpuCores: 0, pidsMax: 16 });
  } catch (err) {
    return { ok: false, reason: `exec cannot create cgroups: ${(err as Error).message}` };
  }
  try {
    const t = tools as SandboxTools;
    const join = 'n=$1; shift; while [ "$n" -gt 0 ]; do echo $$ > "$1" || exit 125; shift; n=$((n-1)); done; exec "$@"';
    const r = await run(t.sh, [
      '-c', join, 'probe', String(cg.procsFiles.length), ...cg.procsFiles,
      t.bwrap, '--unshare-pid', '--unshare-ipc', '--unshare-uts', '--unshare-net', '--die-with-parent',
      '--ro-bind', '/', '/', '--proc', '/proc', '--dev', '/dev', '--',
      t.setpriv, '--reuid=65534', '--regid=65534', '--clear-groups', '--bounding-set=-all', '--no-new-privs', '--', 'true',
    ]);
    if (r.code !== 0) return { ok: false, reason: `exec's sandbox does not work here (bwrap exit ${r.code}): ${r.stderr || 'no message'}` };
  } finally {
    await cg.killAll();
    cg.remove();
  }
  return { ok: true, tools: tools as SandboxTools, cgroups };
}
