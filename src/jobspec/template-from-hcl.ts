/**
 * Decoding of a task's `template` and `artifact` blocks into Nomad's API shapes (Template with
 * EmbeddedTmpl/DestPath/Splay in ns/Wait{Min,Max}; TaskArtifact with Getter* fields), validated
 * as Nomad validates them. Only set fields are returned; defaults come from canonicalize*.
 */
import { isArtifactMode, type ChangeScript, type TaskArtifact, type Template } from '../structs/template.js';
import type { HclBody } from './hcl-body.js';

/** Copies the defined values of `fields` onto a new object (skips undefined). */
function defined<T extends object>(fields: T): T {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(fields)) if (v !== undefined) out[k] = v;
  return out as T;
}

/** `change_script { command, args, timeout, fail_on_error }`. */
function changeScriptFromHcl(b: HclBody): Partial<ChangeScript> {
  const s = defined({
    Command: b.string('command'),
    Args: b.stringList('args'),
    Timeout: b.duration('timeout'),
    FailOnError: b.bool('fail_on_error'),
  });
  if (!s.Command) b.problem('command', 'change_script needs a "command"');
  b.finish();
  return s;
}

/** One `template { … }` block. */
export function templateFromHcl(b: HclBody): Partial<Template> {
  const waitBody = b.block('wait');
  let wait: Template['Wait'] | undefined;
  if (waitBody) {
    wait = { Min: waitBody.duration('min') ?? null, Max: waitBody.duration('max') ?? null };
    if (wait.Min !== null && wait.Max !== null && wait.Min > wait.Max) waitBody.problem('min', 'wait "min" must not be greater than "max"');
    waitBody.finish();
  }
  const scriptBody = b.block('change_script');
  const t = defined({
    SourcePath: b.string('source'),
    DestPath: b.string('destination'),
    EmbeddedTmpl: b.string('data'),
    ChangeMode: b.string('change_mode'),
    ChangeSignal: b.string('change_signal'),
    ChangeScript: scriptBody ? (changeScriptFromHcl(scriptBody) as ChangeScript) : undefined,
    Splay: b.duration('splay'),
    Perms: b.string('perms'),
    Uid: b.number('uid'),
    Gid: b.number('gid'),
    LeftDelim: b.string('left_delimiter'),
    RightDelim: b.string('right_delimiter'),
    Envvars: b.bool('env'),
    VaultGrace: b.duration('vault_grace'),
    Wait: wait,
    ErrMissingKey: b.bool('error_on_missing_key'),
    Once: b.bool('once'),
  });
  // A missing destination or data, an unknown change_mode, a signal mode without its signal:
  // Nomad's parser takes all of these (its own fixtures have templates with neither data nor
  // destination) and the job's validation refuses them, naming the template. So does ours
  // (job-validate checkTemplates), so that every file Nomad parses parses here too.
  if (t.SourcePath && t.EmbeddedTmpl) b.problem('source', 'template takes only one of "source" and "data"');
  if (t.Splay !== undefined && t.Splay < 0) b.problem('splay', '"splay" must not be negative');
  if (t.Perms !== undefined && !/^[0-7]{1,4}$/.test(t.Perms)) b.problem('perms', `"perms" must be an octal mode such as "0644", got ${JSON.stringify(t.Perms)}`);
  if (t.LeftDelim === '') b.problem('left_delimiter', '"left_delimiter" must not be empty');
  if (t.RightDelim === '') b.problem('right_delimiter', '"right_delimiter" must not be empty');
  b.finish();
  return t;
}

/** One `artifact { source, destination, mode, options {…}, headers {…}, insecure, chown }` block. */
export function artifactFromHcl(b: HclBody): Partial<TaskArtifact> {
  const a = defined({
    GetterSource: b.string('source'),
    RelativeDest: b.string('destination'),
    GetterMode: b.string('mode'),
    GetterOptions: b.stringMap('options'),
    GetterHeaders: b.stringMap('headers'),
    GetterInsecure: b.bool('insecure'),
    Chown: b.bool('chown'),
  });
  if (!a.GetterSource) b.problem('source', 'artifact needs a "source"');
  if (a.GetterMode !== undefined && !isArtifactMode(a.GetterMode)) {
    b.problem('mode', `"mode" must be one of "any", "file", "dir", got ${JSON.stringify(a.GetterMode)}`);
  }
  b.finish();
  return a;
}
