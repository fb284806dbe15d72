/**
 * Nomad's exec driver: the task's command isolated in a bubblewrap sandbox (own PID, mount, UTS,
 * IPC and — with network mode "none" — network namespaces; the task directory as its root with
 * the client's chroot_env bound read-only; its own /proc with the kernel's global knobs
 * read-only and its secrets masked; the task's user, a capability bounding set and
 * no_new_privs; a default seccomp filter, also over `alloc exec` sessions) and limited by a
 * cgroup (memory hard and soft limit, CPU shares, pids — 4,096 unless the plugin says otherwise).
 * See docs/exec-sandbox.md for what each part stops.
 *
 * It is raw_exec's supervision with a different command line: the per-data-dir supervisor spawns
 * `sh → bwrap → setpriv → command`, so tasks outlive the agent and are reattached after a
 * restart exactly as raw_exec's are; the cgroup's directories are kept in the task handle. An
 * exit is an OOM kill when the cgroup's memory controller counted one.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { chmod } from 'node:fs/promises';
import { join } from 'node:path';
import { MEMORY_MAX_UNLIMITED } from '../../structs/resources.js';
import {
  DriverError,
  DriverErrorCode,
  FsIsolation,
  TaskRunState,
  type DriverCapabilities,
  type DriverFingerprint,
  type ExecSpec,
  type ExitResult,
  type TaskConfig,
  type TaskHandle,
  type TaskResourceUsage,
} from '../driver.js';
import { RawExecDriver, type PreparedStart, type RawExecDriverOptions } from '../raw_exec/raw-exec-driver.js';
import type { SupervisedExit } from '../supervisor/protocol.js';
import { type CgroupSystem, type TaskCgroup } from './cgroups.js';
import { parseExecPluginConfig, parseExecTaskConfig, taskCapabilities, type ExecPluginConfig } from './exec-config.js';
import { probeExecSupport, type ExecSupport } from './exec-fingerprint.js';
import { procConfinementArgs } from './proc-confinement.js';
import { prepareMountPoints } from './mount-points.js';
import { sandboxExecArgv, sandboxStartArgv, type SandboxTools, type TaskUser } from './sandbox-command.js';
import { writeSeccompFiles, type SeccompFiles } from './seccomp/seccomp-files.js';

/** The driver's name, as in jobspecs. */
export const EXEC_DRIVER_NAME = 'exec';

/** Options of the exec driver. */
export interface ExecDriverOptions extends RawExecDriverOptions {
  /** The body of the client's `plugin "exec" { config { … } }`. */
  pluginConfig?: Record<string, unknown>;
  /** The client's `chroot_env` (host path → path inside); Nomad's default when undefined. */
  chrootEnv?: Record<string, string>;
}

/** What exec keeps in TaskHandle.state, besides raw_exec's start time. */
interface ExecState {
  cgroupDirs: string[];
  cgroupVersion: 'v1' | 'v2';
  uid: number;
  gid: number;
  user: string;
  caps: string[];
  networkNone: boolean;
  pidMode: 'private' | 'host';
  ipcMode: 'private' | 'host';
  workDir: string;
}

const NOBODY = 'nobody';
const CLOCK_TICKS_PER_SECOND = 100;

/** Looks a user up in the host's /etc/passwd (a name or a numeric uid). */
export function lookupUser(name: string): TaskUser {
  const lines = readFileSync('/etc/passwd', 'utf8').split('\n');
  for (const line of lines) {
    const f = line.split(':');
    if (f.length < 4) continue;
    if (f[0] === name || f[2] === name) return { name: f[0]!, uid: Number(f[2]), gid: Number(f[3]) };
  }
  throw new DriverError(DriverErrorCode.BadConfig, `exec: user ${JSON.stringify(name)} does not exist on this client`, false);
}

/** The environment inside the sandbox: the task's, with Nomad's in-sandbox directory paths. */
function sandboxEnv(env: Record<string, string>): Record<string, string> {
  return {
    PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
    ...env,
    NOMAD_ALLOC_DIR: '/alloc',
    NOMAD_TASK_DIR: '/local',
    NOMAD_SECRETS_DIR: '/secrets',
  };
}

/**
 * A cgroup name for one run of a task `<alloc>/<task>`: one path segment, new for every start, so
 * the removal of a previous run's cgroup can never touch the next run's.
 */
function cgroupName(taskId: string): string {
  return `${taskId.replace(/[^A-Za-z0-9_-]/g, '_')}.${Date.now().toString(36)}${Math.floor(Math.random() * 1296).toString(36)}`;
}

/** The exec driver (see the file comment). */
/** How long startTask waits for bwrap to build the sandbox before answering anyway (ms). */
const SANDBOX_BUILD_WAIT_MS = 5000;
/**
 * How often it looks (ms). Every exec task's "running" waits for this look, the build takes
 * ~10-30 ms, and a look is three small reads of /proc: the finest a timer goes.
 */
const SANDBOX_POLL_MS = 1;

export class ExecDriver extends RawExecDriver {
  override readonly name: string = EXEC_DRIVER_NAME;
  private readonly plugin: ExecPluginConfig;
  private support: ExecSupport | null = null;
  /** The /proc confinement arguments: the host's kernel and the chroot_env do not change while we run. */
  private readonly procConfinement: string[];
  /** Written on first use; null when the plugin config turns seccomp off. */
  private seccompFiles: SeccompFiles | null = null;

  constructor(execOpts: ExecDriverOptions) {
    super(execOpts);
    this.plugin = parseExecPluginConfig(execOpts.pluginConfig, execOpts.chrootEnv);
    this.procConfinement = procConfinementArgs(existsSync, this.plugin.chrootEnv);
  }

  /** The filters' paths (written once per agent, so a changed filter reaches the next starts). */
  private seccomp(): SeccompFiles | null {
    if (!this.plugin.seccomp) return null;
    this.seccompFiles ??= writeSeccompFiles(join(this.opts.dataDir, 'exec'));
    return this.seccompFiles;
  }

  /** exec isolates its tasks: raw_exec's `enabled` switch does not apply. */
  protected override checkEnabled(): void {}

  /** Tasks, and commands exec'd into them, run in a bubblewrap sandbox of their own directories. */
  override capabilities(): DriverCapabilities {
    return { fsIsolation: FsIsolation.Chroot };
  }

  override async fingerprint(): Promise<DriverFingerprint> {
    this.support = await probeExecSupport();
    const s = this.support;
    if (!s.ok) return { detected: false, healthy: false, healthDescription: s.reason, attributes: {} };
    return { detected: true, healthy: true, healthDescription: 'Healthy', attributes: { 'driver.exec': '1', 'driver.exec.cgroup': s.cgroups.version } };
  }

  private async ready(): Promise<{ tools: SandboxTools; cgroups: CgroupSystem }> {
    if (!this.support) this.support = await probeExecSupport();
    const s = this.support;
    if (!s.ok) throw new DriverError(DriverErrorCode.StartFailed, `exec: this client cannot isolate tasks: ${s.reason}`, false);
    return { tools: s.tools, cgroups: s.cgroups };
  }

  protected override async prepareStart(config: TaskConfig): Promise<PreparedStart> {
    const { tools, cgroups } = await this.ready();
    const task = parseExecTaskConfig(config.driverConfig ?? {}, this.plugin);
    const caps = taskCapabilities(task, this.plugin);
    const user = lookupUser(config.user || NOBODY);
    const networkMode = config.networkMode || 'host';
    const isolation = config.networkIsolation;
    if (networkMode !== 'none' && networkMode !== 'host' && !isolation) {
      throw new DriverError(DriverErrorCode.BadConfig, `exec: network mode ${JSON.stringify(networkMode)} needs the client's group network (none was set up)`, false);
    }
    if (config.mounts && config.mounts.length > 0) prepareMountPoints(config.dirs.dir, config.dirs.sharedAllocDir, this.plugin.chrootEnv, config.mounts);
    // The task's user writes its own local/ and tmp/ (Nomad makes them world-writable too).
    for (const d of [config.dirs.localDir, config.dirs.tmpDir]) await chmod(d, 0o777).catch(() => {});
    const memMB = config.resources.memoryMaxMB > 0 ? config.resources.memoryMaxMB : config.resources.memoryMB;
    // memory_max = -1: the task keeps its reservation but has no hard limit.
    const unlimited = config.resources.memoryMaxMB === MEMORY_MAX_UNLIMITED;
    let seccompFile: string | undefined;
    try {
      seccompFile = this.seccomp()?.task;
    } catch (err) {
      throw new DriverError(DriverErrorCode.StartFailed, `exec: cannot write the seccomp filter: ${(err as Error).message}`, true, { cause: err });
    }
    let cg: TaskCgroup;
    try {
      cg = cgroups.create(cgroupName(config.id), {
        memoryBytes: unlimited ? 0 : Math.max(memMB, 1) * 1024 * 1024,
        memorySoftBytes: config.resources.memoryMaxMB > 0 || unlimited ? config.resources.memoryMB * 1024 * 1024 : 0,
        cpuShares: config.resources.cpuShares,
        cpuCores: config.resources.cores ?? 0,
        pidsMax: this.plugin.pidsLimit,
      });
    } catch (err) {
      throw new DriverError(DriverErrorCode.StartFailed, `exec: ${(err as Error).message}`, true, { cause: err });
    }
    const argv = sandboxStartArgv(tools, {
      taskDir: config.dirs.dir,
      sharedAllocDir: config.dirs.sharedAllocDir,
      chrootEnv: this.plugin.chrootEnv,
      // The group's namespace when the client made one; else a private one for mode "none".
      networkNone: networkMode === 'none' && !isolation,
      ...(isolation ? { netnsPath: isolation.path, nsenter: tools.nsenter } : {}),
      ...(isolation?.resolvConf ? { resolvConf: isolation.resolvConf } : {}),
      ...(isolation?.hostsFile ? { hostsFile: isolation.hostsFile } : {}),
      task,
      user,
      caps,
      hostname: isolation?.hostname ?? (config.taskName.replace(/[^A-Za-z0-9-]/g, '-').slice(0, 63) || 'task'),
      procsFiles: cg.procsFiles,
      procConfinement: this.procConfinement,
      ...(seccompFile ? { seccompFile } : {}),
      ...(config.mounts ? { mounts: config.mounts } : {}),
    });
    const state: ExecState = {
      cgroupDirs: cg.dirs,
      cgroupVersion: cgroups.version,
      uid: user.uid,
      gid: user.gid,
      user: user.name,
      caps,
      // An exec session enters the task's network namespace whenever it is not the host's.
      networkNone: networkMode === 'none' || Boolean(isolation),
      pidMode: task.pidMode,
      ipcMode: task.ipcMode,
      workDir: task.workDir,
    };
    return {
      file: argv[0]!,
      args: argv.slice(1),
      cwd: config.dirs.dir,
      env: sandboxEnv(config.env ?? {}),
      signalProcs: cg.procsFiles,
      state: state as unknown as Record<string, unknown>,
      cleanup: async () => {
        await cg.killAll();
        cg.remove();
      },
    };
  }

  private stateOf(handle: TaskHandle): ExecState {
    return handle.state as unknown as ExecState;
  }

  private cgroupOf(handle: TaskHandle): TaskCgroup | null {
    const st = this.stateOf(handle);
    if (!this.support?.ok || !Array.isArray(st.cgroupDirs)) return null;
    return this.support.cgroups.open(st.cgroupDirs);
  }

  /** An exit after the kernel's OOM killer struck in the task's cgroup reads as Nomad's "OOM Killed". */
  protected override exitResult(handle: TaskHandle, e: SupervisedExit): ExitResult {
    const r = super.exitResult(handle, e);
    const cg = this.cgroupOf(handle);
    const oom = cg?.oomKilled() ?? false;
    // Read, the cgroup has served: whatever the task left in it dies, and it goes.
    if (cg) void this.removeCgroup(handle.taskId, cg);
    if (oom) return { ...r, exitCode: 137, signal: 9, oomKilled: true };
    // bwrap reports a signal death of the command as 128+signal.
    if (r.signal === 0 && r.exitCode > 128 && r.exitCode < 160) return { ...r, signal: r.exitCode - 128 };
    return r;
  }

  /**
   * Answers once the sandbox is built (or the task has already ended), so a task reported
   * running can be exec'd into at once: Poseidon execs the moment the allocation runs, and an
   * exec before bwrap has moved onto the task directory is refused (see sandboxInitPid).
   */
  override async startTask(config: TaskConfig): Promise<TaskHandle> {
    const handle = await super.startTask(config);
    const deadline = Date.now() + SANDBOX_BUILD_WAIT_MS;
    while (Date.now() < deadline && this.tasks.get(handle.taskId)?.status.state === TaskRunState.Running) {
      if (this.sandboxInitPid(handle.pid, config.dirs.dir) !== undefined) break;
      await new Promise((r) => setTimeout(r, SANDBOX_POLL_MS));
    }
    return handle;
  }

  override async recoverTask(handle: TaskHandle): Promise<void> {
    await this.ready();
    await super.recoverTask(handle);
  }

  override async destroyTask(taskId: string, force: boolean): Promise<void> {
    const t = this.tasks.get(taskId);
    await super.destroyTask(taskId, force);
    const cg = t ? this.cgroupOf(t.handle) : null;
    if (cg) await this.removeCgroup(taskId, cg);
  }

  /** Kills what is left in a task's cgroup (e.g. a daemon of a task in the host pid namespace) and removes it. */
  private async removeCgroup(taskId: string, cg: TaskCgroup): Promise<void> {
    await cg.killAll();
    if (!cg.remove()) this.opts.logger?.warn(`exec: cgroup of "${taskId}" could not be removed`);
  }

  override execSpec(taskId: string, command: string[]): ExecSpec {
    const t = this.mustGet(taskId);
    const st = this.stateOf(t.handle);
    if (!this.support?.ok) throw new DriverError(DriverErrorCode.Unsupported, 'exec: the sandbox tools are not available', false);
    const target = this.sandboxInitPid(t.handle.pid, t.handle.config.dirs.dir);
    if (target === undefined) throw new DriverError(DriverErrorCode.TaskNotFound, `exec: task "${taskId}" has no running sandbox`, false);
    let seccompFile: string | undefined;
    try {
      seccompFile = this.seccomp()?.exec;
    } catch (err) {
      throw new DriverError(DriverErrorCode.StartFailed, `exec: cannot write the seccomp filter: ${(err as Error).message}`, true, { cause: err });
    }
    const tools = this.support.tools;
    const sandbox = {
      user: { name: st.user, uid: st.uid, gid: st.gid },
      caps: st.caps,
      procsFiles: this.cgroupOf(t.handle)?.procsFiles ?? [],
      networkNone: st.networkNone,
      task: st,
      ...(seccompFile ? { seccompFile } : {}),
    };
    const argv = command.length > 0 ? command : ['/bin/sh'];
    const env = sandboxEnv(t.handle.config.env ?? {});
    const plain = sandboxExecArgv(tools, sandbox, target, argv).argv;
    const spec: ExecSpec = { file: plain[0]!, args: plain.slice(1), cwd: t.handle.config.dirs.dir, env, stdioOwner: { uid: st.uid, gid: st.gid } };
    // Without script(1) a terminal session runs on the host's terminal (no ttyname, no job control).
    if (tools.script === undefined) return spec;
    const onTerminal = sandboxExecArgv(tools, sandbox, target, argv, { script: tools.script, taskShell: env.SHELL });
    return { ...spec, relayedTerminal: { file: onTerminal.argv[0]!, args: onTerminal.argv.slice(1), env: { ...env, ...onTerminal.env } } };
  }

  /**
   * The sandbox's first process, once the sandbox is built: bwrap's child exists (in its new
   * namespaces) before it has moved its root onto the task directory, and entering it then would
   * put the command in a half-built mount namespace whose root is still the host's. So the child
   * counts only when its root is the task directory (same device and inode); until then the task
   * is "not found" (retryable), never entered.
   */
  private sandboxInitPid(outerPid: number, taskDir: string): number | undefined {
    try {
      const kids = readFileSync(`/proc/${outerPid}/task/${outerPid}/children`, 'utf8').trim().split(/\s+/).filter((x) => x !== '');
      if (kids.length === 0) return undefined;
      const pid = Number(kids[0]);
      const root = statSync(`/proc/${pid}/root`);
      const dir = statSync(taskDir);
      return root.dev === dir.dev && root.ino === dir.ino ? pid : undefined;
    } catch {
      return undefined;
    }
  }

  override async taskStats(taskId: string): Promise<TaskResourceUsage> {
    const t = this.mustGet(taskId);
    const cg = this.cgroupOf(t.handle);
    const now = this.clock.now();
    if (!cg || t.status.state !== TaskRunState.Running) {
      return { timestamp: now * 1_000_000, memoryRssBytes: 0, cpuTotalTicks: 0, cpuPercent: 0, pids: [] };
    }
    const u = cg.usage();
    const ticks = (u.cpuNanos / 1e9) * CLOCK_TICKS_PER_SECOND;
    let cpuPercent = 0;
    if (t.lastCpu && now > t.lastCpu.at) cpuPercent = Math.max(0, ((ticks - t.lastCpu.ticks) / CLOCK_TICKS_PER_SECOND / ((now - t.lastCpu.at) / 1000)) * 100);
    t.lastCpu = { ticks, at: now };
    return { timestamp: now * 1_000_000, memoryRssBytes: u.memoryBytes, cpuTotalTicks: ticks, cpuPercent, pids: u.pids };
  }
}

/** Creates the exec driver for a client data dir. */
export function createExecDriver(opts: ExecDriverOptions): ExecDriver {
  return new ExecDriver(opts);
}
