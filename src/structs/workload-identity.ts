/**
 * A task's workload identities, as Nomad 1.7+'s `identity` block (Task.Identity for the default
 * one, Task.Identities for named ones): which JWTs the servers sign for the task, and how the
 * client hands each to it — `NOMAD_TOKEN[_<name>]` in its environment, `secrets/nomad_token` or
 * `secrets/nomad_<name>.jwt` (or `filepath`) in its directory — and what the task is told when
 * a renewed token replaces the old one (`change_mode`).
 */
import type { Nanos } from './duration.js';

/** What the task runner does when a renewed identity replaces the one the task holds (Nomad's names). */
export const IdentityChangeMode = {
  Noop: 'noop',
  Restart: 'restart',
  Signal: 'signal',
} as const;
export type IdentityChangeMode = (typeof IdentityChangeMode)[keyof typeof IdentityChangeMode];

/** One identity of a task (Nomad's WorkloadIdentity; `TTL` in nanoseconds, 0: never expires). */
export interface WorkloadIdentity {
  Name: string;
  Audience: string[];
  ChangeMode: string;
  ChangeSignal: string;
  Env: boolean;
  File: boolean;
  /** Where the file goes, relative to the task directory ("" for the default place under secrets/). */
  Filepath: string;
  TTL: Nanos;
}

/** The default identity's name (Nomad's structs.WorkloadIdentityDefaultName). */
export const DEFAULT_IDENTITY_NAME = 'default';
/** The default identity's audience (Nomad's structs.WorkloadIdentityDefaultAud). */
export const DEFAULT_IDENTITY_AUDIENCE = 'nomadproject.io';
/** A name as Nomad accepts one: it ends up in an environment variable and a file name. */
const IDENTITY_NAME = /^[a-zA-Z0-9_-]{1,128}$/;

/** The default identity Nomad gives a task that declares none: signed, not exposed to the task. */
export function defaultWorkloadIdentity(): WorkloadIdentity {
  return { Name: DEFAULT_IDENTITY_NAME, Audience: [DEFAULT_IDENTITY_AUDIENCE], ChangeMode: '', ChangeSignal: '', Env: false, File: false, Filepath: '', TTL: 0 };
}

/** The identity as declared, with Nomad's defaults for what it leaves out (name "default", its audience). */
export function canonicalizeIdentity(raw: Partial<WorkloadIdentity> | null | undefined): WorkloadIdentity {
  const r = raw ?? {};
  const name = r.Name || DEFAULT_IDENTITY_NAME;
  const aud = Array.isArray(r.Audience) && r.Audience.length > 0 ? [...r.Audience] : name === DEFAULT_IDENTITY_NAME ? [DEFAULT_IDENTITY_AUDIENCE] : [];
  return {
    Name: name,
    Audience: aud,
    ChangeMode: r.ChangeMode ?? '',
    ChangeSignal: r.ChangeSignal ?? '',
    Env: r.Env ?? false,
    File: r.File ?? false,
    Filepath: r.Filepath ?? '',
    TTL: r.TTL ?? 0,
  };
}

/** Every identity the servers sign for `task`: its default one (declared or Nomad's), then the named ones. */
export function taskIdentities(task: { Identity?: WorkloadIdentity | null; Identities?: WorkloadIdentity[] | null }): WorkloadIdentity[] {
  return [task.Identity ?? defaultWorkloadIdentity(), ...(task.Identities ?? [])];
}

/** The environment variable an identity exposed with `env = true` is put in. */
export function identityEnvVar(name: string): string {
  return name === DEFAULT_IDENTITY_NAME ? 'NOMAD_TOKEN' : `NOMAD_TOKEN_${name}`;
}

/** Where an identity exposed with `file = true` is written, relative to the task directory. */
export function identityFilePath(identity: WorkloadIdentity): string {
  if (identity.Filepath !== '') return identity.Filepath;
  return identity.Name === DEFAULT_IDENTITY_NAME ? 'secrets/nomad_token' : `secrets/nomad_${identity.Name}.jwt`;
}

/**
 * The problems of a task's identities as `[field path, message]` pairs (Nomad's
 * WorkloadIdentity.Validate plus the task's uniqueness rule); `path` is the task's path.
 */
export function identityProblems(path: string, identity: WorkloadIdentity | null | undefined, identities: WorkloadIdentity[] | null | undefined): [string, string][] {
  const out: [string, string][] = [];
  const all = [...(identity ? [identity] : []), ...(identities ?? [])];
  const seen = new Set<string>();
  for (const id of all) {
    const at = `${path}: identity "${id.Name}"`;
    if (!IDENTITY_NAME.test(id.Name)) out.push([at, `name must be 1 to 128 letters, digits, "-" or "_", got ${JSON.stringify(id.Name)}`]);
    if (seen.has(id.Name)) out.push([at, `more than one identity is named ${JSON.stringify(id.Name)}; only one identity block may omit name`]);
    seen.add(id.Name);
    if (!Number.isInteger(id.TTL) || id.TTL < 0) out.push([at, `ttl must be a non-negative duration, got ${id.TTL}`]);
    if (!id.Audience.every((a) => typeof a === 'string' && a !== '')) out.push([at, 'aud must be a list of non-empty strings']);
    const modes: readonly string[] = Object.values(IdentityChangeMode);
    if (id.ChangeMode !== '' && !modes.includes(id.ChangeMode)) out.push([at, `change_mode must be one of ${modes.join(', ')}, got ${JSON.stringify(id.ChangeMode)}`]);
    if (id.ChangeMode === IdentityChangeMode.Signal && id.ChangeSignal === '') out.push([at, 'change_signal is required when change_mode is "signal"']);
    if (id.ChangeMode !== IdentityChangeMode.Signal && id.ChangeSignal !== '') out.push([at, 'change_signal may only be set when change_mode is "signal"']);
    if (id.Filepath !== '') {
      if (!id.File) out.push([at, 'filepath requires file = true']);
      if (id.Filepath.startsWith('/') || id.Filepath.split(/[\\/]/).includes('..')) out.push([at, `filepath must stay inside the task directory, got ${JSON.stringify(id.Filepath)}`]);
    }
  }
  for (const id of identities ?? []) {
    if (id.Name === DEFAULT_IDENTITY_NAME) out.push([`${path}: identity "${id.Name}"`, 'the default identity goes in Identity, not Identities']);
  }
  if (identity && identity.Name !== DEFAULT_IDENTITY_NAME) out.push([`${path}: identity "${identity.Name}"`, 'the default identity (Task.Identity) must be named "default"']);
  return out;
}
