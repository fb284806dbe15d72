/**
 * Template and artifact blocks of a task in Nomad's API shape (api/tasks.go Template,
 * WaitConfig, ChangeScript, TaskArtifact), with their Canonicalize defaults. Durations are ns.
 */
import { NANOS_PER_SECOND, type Nanos } from './duration.js';

/** What the client does when a rendered template changes. */
export const TemplateChangeMode = {
  Noop: 'noop',
  Restart: 'restart',
  Signal: 'signal',
  Script: 'script',
} as const;
export type TemplateChangeMode = (typeof TemplateChangeMode)[keyof typeof TemplateChangeMode];

/** Whether a string is one of Nomad's template change modes. */
export function isTemplateChangeMode(v: string): v is TemplateChangeMode {
  return (Object.values(TemplateChangeMode) as string[]).includes(v);
}

/** Min/max quiescence wait before rendering. */
export interface WaitConfig {
  Min: Nanos | null;
  Max: Nanos | null;
}

/** The script run for change_mode "script". */
export interface ChangeScript {
  Command: string;
  Args: string[];
  Timeout: Nanos;
  FailOnError: boolean;
}

/** A template rendered into the task directory before the task starts. */
export interface Template {
  SourcePath: string;
  DestPath: string;
  EmbeddedTmpl: string;
  ChangeMode: string;
  ChangeScript: ChangeScript | null;
  ChangeSignal: string;
  Splay: Nanos;
  Perms: string;
  Uid: number | null;
  Gid: number | null;
  LeftDelim: string;
  RightDelim: string;
  Envvars: boolean;
  VaultGrace: Nanos;
  Wait: WaitConfig | null;
  ErrMissingKey: boolean;
  /** Render once, when the task starts: later changes to what it reads neither re-render it nor trigger its change_mode (Nomad 1.10). */
  Once: boolean;
}

/** Getter modes of an artifact. */
export const ArtifactMode = { Any: 'any', File: 'file', Dir: 'dir' } as const;
export type ArtifactMode = (typeof ArtifactMode)[keyof typeof ArtifactMode];

/** Whether a string is one of the artifact getter modes. */
export function isArtifactMode(v: string): v is ArtifactMode {
  return (Object.values(ArtifactMode) as string[]).includes(v);
}

/** A file fetched into the task directory before the task starts. */
export interface TaskArtifact {
  GetterSource: string;
  GetterOptions: Record<string, string> | null;
  GetterHeaders: Record<string, string> | null;
  GetterMode: string;
  GetterInsecure: boolean;
  RelativeDest: string;
  Chown: boolean;
}

type Input<T> = { [K in keyof T]?: T[K] | null | undefined };

function nonEmptyMap(v: Record<string, string> | null | undefined): Record<string, string> | null {
  return v && Object.keys(v).length > 0 ? { ...v } : null;
}

/** Nomad's template defaults: restart, 5s splay, 0644, `{{ }}`; the signal upper-cased (SIGHUP for signal mode). */
export function canonicalizeTemplate(t: Input<Template>): Template {
  const changeMode = t.ChangeMode ?? TemplateChangeMode.Restart;
  const signal = t.ChangeSignal !== undefined && t.ChangeSignal !== null ? t.ChangeSignal.toUpperCase() : changeMode === TemplateChangeMode.Signal ? 'SIGHUP' : '';
  const script = t.ChangeScript
    ? {
        Command: t.ChangeScript.Command ?? '',
        Args: [...(t.ChangeScript.Args ?? [])],
        Timeout: t.ChangeScript.Timeout ?? 5 * NANOS_PER_SECOND,
        FailOnError: t.ChangeScript.FailOnError ?? false,
      }
    : null;
  return {
    SourcePath: t.SourcePath ?? '',
    DestPath: t.DestPath ?? '',
    EmbeddedTmpl: t.EmbeddedTmpl ?? '',
    ChangeMode: changeMode,
    ChangeScript: script,
    ChangeSignal: signal,
    Splay: t.Splay ?? 5 * NANOS_PER_SECOND,
    Perms: t.Perms ?? '0644',
    Uid: t.Uid ?? null,
    Gid: t.Gid ?? null,
    LeftDelim: t.LeftDelim ?? '{{',
    RightDelim: t.RightDelim ?? '}}',
    Envvars: t.Envvars ?? false,
    VaultGrace: t.VaultGrace ?? 0,
    Wait: t.Wait ? { Min: t.Wait.Min ?? null, Max: t.Wait.Max ?? null } : null,
    ErrMissingKey: t.ErrMissingKey ?? false,
    Once: t.Once ?? false,
  };
}

/** Nomad's artifact defaults: mode "any", destination "local/" (or `local/<basename>` in file mode). */
export function canonicalizeArtifact(a: Input<TaskArtifact>): TaskArtifact {
  const mode = a.GetterMode ?? ArtifactMode.Any;
  const source = a.GetterSource ?? '';
  let dest = a.RelativeDest;
  if (dest === undefined || dest === null) {
    const base = source.replace(/[?#].*$/, '').split('/').filter((p) => p !== '').pop() ?? '';
    dest = mode === ArtifactMode.File ? `local/${base}` : 'local/';
  }
  return {
    GetterSource: source,
    GetterOptions: nonEmptyMap(a.GetterOptions),
    GetterHeaders: nonEmptyMap(a.GetterHeaders),
    GetterMode: mode,
    GetterInsecure: a.GetterInsecure ?? false,
    RelativeDest: dest,
    Chown: a.Chown ?? false,
  };
}
