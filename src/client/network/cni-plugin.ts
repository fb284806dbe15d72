/**
 * Runs one CNI plugin binary as the CNI specification says: the command in CNI_COMMAND, the
 * container, namespace and interface in CNI_CONTAINERID / CNI_NETNS / CNI_IFNAME, the plugin
 * search path in CNI_PATH, the network configuration as JSON on stdin; the result (ADD) or
 * nothing (DEL, CHECK) on stdout, and on failure a JSON error `{code, msg, details}`.
 */
import { execFile } from 'node:child_process';
import { access, constants } from 'node:fs/promises';
import { join } from 'node:path';
import { CaravanError } from '../../structs/caravan-error.js';

/** The CNI operations Caravan uses. */
export const CniCommand = { Add: 'ADD', Del: 'DEL', Check: 'CHECK' } as const;
export type CniCommand = (typeof CniCommand)[keyof typeof CniCommand];

/** Where and on what a plugin runs. */
export interface CniInvocation {
  command: CniCommand;
  containerId: string;
  netnsPath: string;
  ifName: string;
  /** Directories searched for plugin binaries, in order (Nomad's `cni_path`). */
  cniPath: string[];
}

/** A plugin that failed: its own CNI error code (`cniCode`, 0 when it printed none) and message. */
export class CniPluginError extends CaravanError<'CLIENT_CNI_PLUGIN'> {
  constructor(
    readonly plugin: string,
    readonly command: CniCommand,
    readonly cniCode: number,
    reason: string,
  ) {
    super('CLIENT_CNI_PLUGIN', { plugin, command, reason });
    this.name = 'CniPluginError';
  }
}

/** A plugin's run may not hang a set-up forever; the reference plugins answer in milliseconds. */
const PLUGIN_TIMEOUT_MS = 30_000;

/** Finds the plugin's binary on the CNI path; undefined when no directory has it. */
export async function findCniPlugin(type: string, cniPath: string[]): Promise<string | undefined> {
  // A type is a file name, never a path: a conflist must not make the agent run something else.
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(type)) return undefined;
  for (const dir of cniPath) {
    const file = join(dir, type);
    try {
      await access(file, constants.X_OK);
      return file;
    } catch {
      // next directory
    }
  }
  return undefined;
}

/** Runs the plugin named by `conf.type` with `conf` on stdin; resolves to its parsed stdout (null when empty). */
export async function invokeCniPlugin(conf: Record<string, unknown>, inv: CniInvocation): Promise<Record<string, unknown> | null> {
  const type = String(conf['type'] ?? '');
  const file = await findCniPlugin(type, inv.cniPath);
  if (!file) throw new CniPluginError(type, inv.command, 0, `no executable "${type}" in cni_path ${inv.cniPath.join(':')}`);
  const env: Record<string, string> = {
    CNI_COMMAND: inv.command,
    CNI_CONTAINERID: inv.containerId,
    CNI_NETNS: inv.netnsPath,
    CNI_IFNAME: inv.ifName,
    CNI_PATH: inv.cniPath.join(':'),
    PATH: process.env['PATH'] ?? '/usr/sbin:/usr/bin:/sbin:/bin',
  };
  const { stdout, stderr, code } = await new Promise<{ stdout: string; stderr: string; code: number }>((resolve) => {
    const child = execFile(file, [], { env, timeout: PLUGIN_TIMEOUT_MS, maxBuffer: 4 * 1024 * 1024 }, (err, out, errOut) => {
      const c = err ? (typeof (err as { code?: unknown }).code === 'number' ? ((err as { code: number }).code) : 1) : 0;
      resolve({ stdout: String(out), stderr: String(errOut), code: c });
    });
    child.stdin?.end(JSON.stringify(conf));
  });
  if (code !== 0) {
    let msg = stderr.trim() || `exit status ${code}`;
    let cniCode = 0;
    try {
      const e = JSON.parse(stdout) as { code?: number; msg?: string; details?: string };
      if (e.msg) msg = e.details ? `${e.msg}: ${e.details}` : e.msg;
      cniCode = e.code ?? 0;
    } catch {
      // not a CNI error object: keep stderr
    }
    throw new CniPluginError(type, inv.command, cniCode, msg);
  }
  const text = stdout.trim();
  if (text === '') return null;
  try {
    return JSON.parse(text) as Record<string, unknown>;
  } catch {
    throw new CniPluginError(type, inv.command, 0, `printed a result that is not JSON: ${text.slice(0, 200)}`);
  }
}
