/**
 * The raw_exec task config (`config { command = "…" args = [...] }`), validated, and how
 * its command resolves to a file and its environment is assembled.
 */
import { accessSync, constants as fsConstants, statSync } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';
import { DriverError, DriverErrorCode } from '../driver.js';
import { refuseUnknownConfigKeys } from '../unknown-config-keys.js';

/** A validated raw_exec config. */
export interface RawExecConfig {
  command: string;
  args: string[];
}

/** The task config fields raw_exec reads. */
const RAW_EXEC_KEYS = ['command', 'args'] as const;

/** Validates a raw_exec driver config; errors name the offending field (an unknown one with the closest known). */
export function parseRawExecConfig(cfg: Record<string, unknown>): RawExecConfig {
  refuseUnknownConfigKeys('raw_exec', cfg, RAW_EXEC_KEYS);
  const command = cfg['command'];
  if (typeof command !== 'string' || command.trim() === '') {
    throw new DriverError(DriverErrorCode.BadConfig, 'raw_exec: config field "command" is required and must be a non-empty string', false);
  }
  const rawArgs = cfg['args'] ?? [];
  if (!Array.isArray(rawArgs)) {
    throw new DriverError(DriverErrorCode.BadConfig, 'raw_exec: config field "args" must be a list of strings', false);
  }
  const args = rawArgs.map((a, i) => {
    if (typeof a === 'string') return a;
    if (typeof a === 'number' || typeof a === 'boolean') return String(a);
    throw new DriverError(DriverErrorCode.BadConfig, `raw_exec: config field "args[${i}]" must be a string`, false);
  });
  return { command, args };
}

function isExecutableFile(p: string): boolean {
  try {
    if (!statSync(p).isFile()) return false;
    accessSync(p, fsConstants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * Resolves a command the way Nomad's raw_exec does: an absolute path is used as is; a path
 * with a slash, or a bare name present in the task dir (e.g. from an artifact), is taken
 * relative to the task dir; otherwise the name is looked up on PATH.
 */
export function resolveCommand(command: string, taskDir: string, pathVar: string | undefined): string {
  if (isAbsolute(command)) return command;
  const inTaskDir = join(taskDir, command);
  if (command.includes('/') || isExecutableFile(inTaskDir)) return inTaskDir;
  for (const dir of (pathVar ?? '').split(delimiter)) {
    if (!dir) continue;
    const p = join(dir, command);
    if (isExecutableFile(p)) return p;
  }
  throw new DriverError(DriverErrorCode.StartFailed, `raw_exec: command "${command}" not found in the task directory or on PATH`, false);
}

/** Variables of the agent's environment never handed to tasks (Nomad's default client env.denylist). */
export const DEFAULT_ENV_DENYLIST = [
  'CONSUL_TOKEN',
  'CONSUL_HTTP_TOKEN',
  'CONSUL_LICENSE',
  'VAULT_TOKEN',
  'VAULT_LICENSE',
  'NOMAD_LICENSE',
  'AWS_ACCESS_KEY_ID',
  'AWS_SECRET_ACCESS_KEY',
  'AWS_SESSION_TOKEN',
  'GOOGLE_APPLICATION_CREDENTIALS',
];

/**
 * The environment of a raw_exec task. Like Nomad for drivers without filesystem isolation,
 * the agent's own environment (minus the denylist) is inherited underneath the task's env,
 * so PATH, HOME, LANG … reach the task; the task's variables win.
 */
export function buildTaskEnv(
  taskEnv: Record<string, string>,
  hostEnv: NodeJS.ProcessEnv | null,
  denylist: readonly string[] = DEFAULT_ENV_DENYLIST,
): Record<string, string> {
  const out: Record<string, string> = {};
  if (hostEnv) {
    const deny = new Set(denylist);
    for (const [k, v] of Object.entries(hostEnv)) if (v !== undefined && !deny.has(k)) out[k] = v;
  }
  return Object.assign(out, taskEnv);
}
