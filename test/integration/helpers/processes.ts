/**
 * Processes on this machine as integration tests see them: a task's PIDs (found by the
 * NOMAD_ALLOC_ID / NOMAD_TASK_NAME in its environment) and the clean-up of everything an agent's
 * data dir left running (its tasks survive the agent by design, and so does the supervisor).
 */
import { readFileSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';

interface ProcInfo {
  pid: number;
  env: Map<string, string>;
  cmdline: string;
}

async function readProc(pid: number): Promise<ProcInfo | undefined> {
  try {
    const [environ, cmdline] = await Promise.all([readFile(`/proc/${pid}/environ`, 'utf8'), readFile(`/proc/${pid}/cmdline`, 'utf8')]);
    const env = new Map<string, string>();
    for (const kv of environ.split('\0')) {
      const i = kv.indexOf('=');
      if (i > 0) env.set(kv.slice(0, i), kv.slice(i + 1));
    }
    return { pid, env, cmdline: cmdline.split('\0').join(' ').trim() };
  } catch {
    return undefined; // gone meanwhile, or not ours to read
  }
}

async function allProcs(): Promise<ProcInfo[]> {
  const pids = (await readdir('/proc')).filter((n) => /^\d+$/.test(n)).map(Number);
  const infos = await Promise.all(pids.map(readProc));
  return infos.filter((p): p is ProcInfo => p !== undefined && !isZombie(p.pid));
}

/** A zombie (exited, not yet reaped) or missing process counts as dead. */
function isZombie(pid: number): boolean {
  try {
    return /^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, 'utf8'));
  } catch {
    return true;
  }
}

/**
 * The live PIDs of a task's processes, found by the NOMAD_ALLOC_ID/NOMAD_TASK_NAME the client
 * put in their environment. The topmost one (whose parent is not also the task's) comes first.
 */
export async function taskPids(allocId: string, task: string): Promise<number[]> {
  const mine = (await allProcs()).filter((p) => p.env.get('NOMAD_ALLOC_ID') === allocId && p.env.get('NOMAD_TASK_NAME') === task);
  const pids = new Set(mine.map((p) => p.pid));
  const ppid = (pid: number): number => {
    try {
      return Number(/^PPid:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
    } catch {
      return 0;
    }
  };
  const roots = mine.filter((p) => !pids.has(ppid(p.pid))).map((p) => p.pid);
  const rest = mine.map((p) => p.pid).filter((p) => !roots.includes(p));
  return [...roots, ...rest];
}

/** Whether a process with this PID is alive (and not a zombie). */
export function pidAlive(pid: number): boolean {
  return !isZombie(pid);
}

/**
 * Kills (SIGKILL) every process that belongs to this data dir: tasks (their environment names
 * the data dir) and the supervisor (its command line does). Used in test cleanup so no test
 * leaves processes behind, whatever happened.
 */
export async function killDataDirProcesses(dataDir: string): Promise<void> {
  for (const p of await allProcs()) {
    if (p.pid === process.pid) continue;
    const ownsTask = [...p.env.values()].some((v) => v.startsWith(dataDir));
    const isSupervisor = p.cmdline.includes('supervisor') && p.cmdline.includes(dataDir);
    // A sandboxed (exec) task's environment names only in-sandbox paths; its outer bwrap's command line names the data dir.
    const isSandbox = p.cmdline.includes('bwrap') && p.cmdline.includes(dataDir);
    if (!ownsTask && !isSupervisor && !isSandbox) continue;
    try {
      process.kill(p.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}
