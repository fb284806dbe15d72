/**
 * Cgroups of exec tasks, v1 or v2 behind one interface: a task's cgroup gets its memory, CPU and
 * pids limits before the task joins it (a tiny shell writes its own pid into every
 * `cgroup.procs` and then execs the sandbox, so no process of the task ever runs unlimited),
 * reports whether the kernel OOM-killed in it, its usage, and is emptied and removed at the end.
 *
 * Task cgroups live under the agent's own cgroup of each hierarchy, in `caravan/`, so whatever
 * limits the agent's host gives it also bound its tasks.
 */
import { existsSync, mkdirSync, readFileSync, readdirSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** The resource limits of one task. */
export interface CgroupLimits {
  /** Hard memory limit, bytes; 0 for none (`memory_max = -1`). */
  memoryBytes: number;
  /** Soft memory limit (reservation), bytes; 0 for none. */
  memorySoftBytes: number;
  /** Relative CPU weight, Nomad's `cpu` (MHz) used as v1 shares. */
  cpuShares: number;
  /** CPU quota in cores (Nomad's `cores`); 0 for none. */
  cpuCores: number;
  /** Maximum number of processes; 0 for no limit. */
  pidsMax: number;
}

/** Usage read from a task's cgroup. */
export interface CgroupUsage {
  memoryBytes: number;
  /** Total CPU time, nanoseconds. */
  cpuNanos: number;
  pids: number[];
}

/** One task's cgroup (in every hierarchy it spans). */
export interface TaskCgroup {
  /** The `cgroup.procs` files a process must join, in order. */
  readonly procsFiles: string[];
  /** Directories of the cgroup, persisted in the task handle to find it again after a restart. */
  readonly dirs: string[];
  oomKilled(): boolean;
  usage(): CgroupUsage;
  pids(): number[];
  /** SIGKILLs every process in the cgroup, re-checking until it is empty (or gives up). */
  killAll(): Promise<void>;
  /** Removes the (empty) cgroup; true when it is gone. */
  remove(): boolean;
}

/** A cgroup hierarchy layout able to make task cgroups. */
export interface CgroupSystem {
  readonly version: 'v1' | 'v2';
  /** Creates (or reuses) the cgroup `name` with `limits`. Throws naming the file that failed. */
  create(name: string, limits: CgroupLimits): TaskCgroup;
  /** The cgroup of a task created earlier (from its persisted dirs). */
  open(dirs: string[]): TaskCgroup;
}

const CGROUP_ROOT = '/sys/fs/cgroup';
const V1_CONTROLLERS = ['memory', 'cpu', 'cpuacct', 'pids'] as const;

function readInt(path: string): number {
  try {
    return Number(readFileSync(path, 'utf8').trim()) || 0;
  } catch {
    return 0;
  }
}

function readPids(procsFile: string): number[] {
  try {
    return readFileSync(procsFile, 'utf8').split('\n').filter((l) => l !== '').map(Number);
  } catch {
    return [];
  }
}

function write(path: string, value: string | number): void {
  try {
    writeFileSync(path, String(value));
  } catch (err) {
    throw new Error(`cgroup: cannot write ${value} to ${path}: ${(err as Error).message}`, { cause: err });
  }
}

/** The agent's own cgroup path in each v1 hierarchy (`/proc/self/cgroup`), by controller. */
function selfCgroups(): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of readFileSync('/proc/self/cgroup', 'utf8').split('\n')) {
    const m = /^\d+:([^:]*):(.*)$/.exec(line);
    if (!m) continue;
    for (const c of m[1]!.split(',')) out.set(c === '' ? 'unified' : c, m[2]!);
  }
  return out;
}

/** A mounted v1 hierarchy directory of a controller (`cpu` may be mounted as `cpu,cpuacct`). */
function v1Mount(controller: string): string | undefined {
  const direct = join(CGROUP_ROOT, controller);
  if (existsSync(join(direct, 'cgroup.procs'))) return direct;
  for (const name of safeReaddir(CGROUP_ROOT)) {
    if (name.split(',').includes(controller) && existsSync(join(CGROUP_ROOT, name, 'cgroup.procs'))) return join(CGROUP_ROOT, name);
  }
  return undefined;
}

function safeReaddir(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function killUntilEmpty(procsFiles: string[]): Promise<void> {
  for (let i = 0; i < 50; i++) {
    const pids = new Set(procsFiles.flatMap(readPids));
    if (pids.size === 0) return;
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Gone already.
      }
    }
    await sleep(20);
  }
}

function removeDirs(dirs: string[]): boolean {
  let ok = true;
  for (const d of dirs) {
    try {
      rmdirSync(d);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') ok = false;
    }
  }
  return ok;
}

class V1TaskCgroup implements TaskCgroup {
  constructor(readonly dirs: string[]) {}

  private dir(controller: string): string | undefined {
    const mount = v1Mount(controller);
    return mount === undefined ? undefined : this.dirs.find((d) => d.startsWith(mount + '/'));
  }

  get procsFiles(): string[] {
    return this.dirs.map((d) => join(d, 'cgroup.procs'));
  }

  oomKilled(): boolean {
    const mem = this.dir('memory');
    if (!mem) return false;
    try {
      const m = /^oom_kill (\d+)$/m.exec(readFileSync(join(mem, 'memory.oom_control'), 'utf8'));
      return m !== null && Number(m[1]) > 0;
    } catch {
      return false;
    }
  }

  usage(): CgroupUsage {
    const mem = this.dir('memory');
    const acct = this.dir('cpuacct');
    let memoryBytes = 0;
    if (mem) {
      // RSS + cache as `docker stats` and Nomad's executor report: usage minus inactive file pages.
      memoryBytes = readInt(join(mem, 'memory.usage_in_bytes'));
      try {
        const m = /^total_inactive_file (\d+)$/m.exec(readFileSync(join(mem, 'memory.stat'), 'utf8'));
        if (m) memoryBytes = Math.max(0, memoryBytes - Number(m[1]));
      } catch {
        // keep the raw usage
      }
    }
    return { memoryBytes, cpuNanos: acct ? readInt(join(acct, 'cpuacct.usage')) : 0, pids: this.pids() };
  }

  pids(): number[] {
    const d = this.dir('pids') ?? this.dirs[0];
    return d ? readPids(join(d, 'cgroup.procs')) : [];
  }

  killAll(): Promise<void> {
    return killUntilEmpty(this.procsFiles);
  }

  remove(): boolean {
    return removeDirs(this.dirs);
  }
}

class V1System implements CgroupSystem {
  readonly version = 'v1' as const;
  /** Parent directory per controller: the agent's own cgroup + `/caravan`. */
  private readonly parents: Map<string, string>;

  constructor() {
    const self = selfCgroups();
    this.parents = new Map();
    for (const c of V1_CONTROLLERS) {
      const mount = v1Mount(c);
      if (!mount) throw new Error(`cgroup v1: the ${c} controller is not mounted under ${CGROUP_ROOT}`);
      // Hierarchies mounted together (cpu,cpuacct) share one directory: create it once.
      this.parents.set(c, join(mount, self.get(c) ?? '/', 'caravan'));
    }
  }

  create(name: string, limits: CgroupLimits): TaskCgroup {
    const dirs = [...new Set([...this.parents.values()].map((p) => join(p, name)))];
    for (const d of dirs) mkdirSync(d, { recursive: true });
    const cg = new V1TaskCgroup(dirs);
    const mem = join(this.parents.get('memory')!, name);
    // The hard limit first: memsw may never be below it.
    const hard = limits.memoryBytes > 0 ? limits.memoryBytes : -1;
    write(join(mem, 'memory.limit_in_bytes'), hard);
    if (existsSync(join(mem, 'memory.memsw.limit_in_bytes'))) write(join(mem, 'memory.memsw.limit_in_bytes'), hard);
    if (limits.memorySoftBytes > 0) write(join(mem, 'memory.soft_limit_in_bytes'), limits.memorySoftBytes);
    const cpu = join(this.parents.get('cpu')!, name);
    write(join(cpu, 'cpu.shares'), Math.max(2, Math.round(limits.cpuShares)));
    if (limits.cpuCores > 0) {
      const period = readInt(join(cpu, 'cpu.cfs_period_us')) || 100_000;
      write(join(cpu, 'cpu.cfs_quota_us'), Math.round(limits.cpuCores * period));
    }
    write(join(join(this.parents.get('pids')!, name), 'pids.max'), limits.pidsMax > 0 ? limits.pidsMax : 'max');
    return cg;
  }

  open(dirs: string[]): TaskCgroup {
    return new V1TaskCgroup(dirs);
  }
}

class V2TaskCgroup implements TaskCgroup {
  constructor(private readonly dir: string) {}

  get dirs(): string[] {
    return [this.dir];
  }

  get procsFiles(): string[] {
    return [join(this.dir, 'cgroup.procs')];
  }

  oomKilled(): boolean {
    try {
      const m = /^oom_kill (\d+)$/m.exec(readFileSync(join(this.dir, 'memory.events'), 'utf8'));
      return m !== null && Number(m[1]) > 0;
    } catch {
      return false;
    }
  }

  usage(): CgroupUsage {
    let cpuNanos = 0;
    try {
      const m = /^usage_usec (\d+)$/m.exec(readFileSync(join(this.dir, 'cpu.stat'), 'utf8'));
      if (m) cpuNanos = Number(m[1]) * 1000;
    } catch {
      // no cpu controller
    }
    return { memoryBytes: readInt(join(this.dir, 'memory.current')), cpuNanos, pids: this.pids() };
  }

  pids(): number[] {
    return readPids(join(this.dir, 'cgroup.procs'));
  }

  async killAll(): Promise<void> {
    try {
      writeFileSync(join(this.dir, 'cgroup.kill'), '1');
    } catch {
      // Kernels before 5.14: kill one by one below.
    }
    await killUntilEmpty(this.procsFiles);
  }

  remove(): boolean {
    return removeDirs([this.dir]);
  }
}

class V2System implements CgroupSystem {
  readonly version = 'v2' as const;
  private readonly parent: string;

  constructor() {
    const self = selfCgroups().get('unified') ?? '/';
    this.parent = join(CGROUP_ROOT, self, 'caravan');
    const controllers = readFileSync(join(CGROUP_ROOT, self, 'cgroup.controllers'), 'utf8').trim().split(/\s+/);
    for (const c of ['memory', 'cpu', 'pids']) {
      if (!controllers.includes(c)) throw new Error(`cgroup v2: the ${c} controller is not available in ${join(CGROUP_ROOT, self)}`);
    }
    // A v2 cgroup with processes cannot delegate controllers ("no internal processes"): our own
    // tasks hang below a `caravan` cgroup that holds none.
    mkdirSync(this.parent, { recursive: true });
    write(join(this.parent, 'cgroup.subtree_control'), '+memory +cpu +pids');
  }

  create(name: string, limits: CgroupLimits): TaskCgroup {
    const dir = join(this.parent, name);
    mkdirSync(dir, { recursive: true });
    write(join(dir, 'memory.max'), limits.memoryBytes > 0 ? limits.memoryBytes : 'max');
    if (existsSync(join(dir, 'memory.swap.max'))) write(join(dir, 'memory.swap.max'), 0);
    if (limits.memorySoftBytes > 0) write(join(dir, 'memory.low'), limits.memorySoftBytes);
    // v1 shares [2, 262144] onto v2 weight [1, 10000], as runc converts them.
    const shares = Math.max(2, Math.round(limits.cpuShares));
    write(join(dir, 'cpu.weight'), Math.min(10_000, 1 + Math.floor(((shares - 2) * 9999) / 262142)));
    if (limits.cpuCores > 0) write(join(dir, 'cpu.max'), `${Math.round(limits.cpuCores * 100_000)} 100000`);
    write(join(dir, 'pids.max'), limits.pidsMax > 0 ? limits.pidsMax : 'max');
    return new V2TaskCgroup(dir);
  }

  open(dirs: string[]): TaskCgroup {
    return new V2TaskCgroup(dirs[0] ?? '');
  }
}

/**
 * The host's cgroup system: v2 when `/sys/fs/cgroup` is a unified hierarchy with its resource
 * controllers, v1 when the controllers are mounted separately. Throws saying why neither works.
 */
export function detectCgroupSystem(): CgroupSystem {
  if (existsSync(join(CGROUP_ROOT, 'cgroup.controllers'))) return new V2System();
  if (v1Mount('memory')) return new V1System();
  throw new Error(`no usable cgroup hierarchy under ${CGROUP_ROOT}`);
}
