/**
 * Entry points of the jobspec package: a job file's text (Nomad HCL2, or API JSON) into a
 * JobDraft, with HCL variables resolved from defaults, `-var` and `-var-file`. `loadJobFile`
 * goes on to canonicalize and validate, which is what `job run`/`job validate` want.
 */
import { readFile } from 'node:fs/promises';
import { basename, dirname, resolve } from 'node:path';
import { parse as parseHcl } from '@cdktf/hcl2json';
import { canonicalizeJob } from '../structs/job-defaults.js';
import { assertValidJob, type ValidateJobOptions } from '../structs/job-validate.js';
import type { Job } from '../structs/job.js';
import { DecodeContext } from './decode-context.js';
import { JobspecParseError, type JobspecProblem } from './jobspec-error.js';
import { resolveVariables, type VariableInputs } from './hcl-variables.js';
import { evaluateJobTree } from './hcl-tree-evaluation.js';
import type { FileAccess } from './hcl2/functions/file-functions.js';
import { jobFromHclTree } from './job-from-hcl.js';
import { jobFromApiJson } from './job-from-json.js';
import { rewriteTaskConfigBlocks } from './rewrite-task-config-blocks.js';
import type { JobDraft } from '../structs/job-draft.js';

/** How to read a job file. */
export interface JobspecOptions {
  /** Name used in messages (and to tell JSON from HCL by extension). Default "<input>". */
  filename?: string;
  /** `-var` values: `["k=v", …]` as on the command line, or a map. */
  vars?: readonly string[] | Record<string, string>;
  /** `-var-file` paths (HCL, or JSON when they end in .json); later files win. */
  varFiles?: readonly string[];
  /** Directory relative var-file paths are resolved against (default process.cwd()). */
  cwd?: string;
  /**
   * Let `file()`, `fileset()` and the other filesystem functions read, relative to
   * `baseDir`. Off by default: a server parsing a request's HCL must not read its own files
   * (Nomad's /v1/jobs/parse disables them too); the CLI turns it on for the user's file.
   */
  fileFunctions?: { baseDir: string };
  /**
   * The environment: `NOMAD_VAR_<name>` gives variable `<name>` a value below -var-file and
   * -var, as Nomad's CLI reads it. Variables the file does not declare are ignored.
   */
  env?: Readonly<Record<string, string | undefined>>;
}

/** `NOMAD_VAR_<name>` entries of an environment, by variable name. */
function envVariables(env: Readonly<Record<string, string | undefined>> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env ?? {})) {
    if (k.startsWith('NOMAD_VAR_') && k.length > 'NOMAD_VAR_'.length && v !== undefined) out[k.slice('NOMAD_VAR_'.length)] = v;
  }
  return out;
}

/** Turns `["k=v", …]` into a map; a flag without "=" is a problem. */
export function parseVarFlags(flags: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  const problems: JobspecProblem[] = [];
  for (const f of flags) {
    const eq = f.indexOf('=');
    if (eq <= 0) {
      problems.push({ file: '-var', path: '', message: `malformed -var ${JSON.stringify(f)}: expected NAME=VALUE` });
      continue;
    }
    out[f.slice(0, eq)] = f.slice(eq + 1);
  }
  if (problems.length > 0) throw new JobspecParseError(problems);
  return out;
}

/** hcl2json's errors read `parse config: [file:3,10-4,1: Summary; Detail]`; pull out the line. */
function hclSyntaxProblem(file: string, err: unknown): JobspecProblem {
  const text = err instanceof Error ? err.message : String(err);
  const m = /\[?([^[\]:]+):(\d+),\d+(?:-\d+(?:,\d+)?)?: ([^\]]*)\]?/.exec(text);
  if (m) return { file, line: Number(m[2]), path: '', message: `syntax error: ${m[3]!.trim()}` };
  return { file, path: '', message: `syntax error: ${text.replace(/^parse config: /, '')}` };
}

async function parseHclTree(file: string, source: string): Promise<Record<string, unknown>> {
  try {
    return (await parseHcl(basename(file), source)) as Record<string, unknown>;
  } catch (err) {
    throw new JobspecParseError([hclSyntaxProblem(file, err)], { cause: err });
  }
}

async function readVarFiles(paths: readonly string[], cwd: string): Promise<Record<string, unknown>> {
  const merged: Record<string, unknown> = {};
  for (const p of paths) {
    let text: string;
    try {
      text = await readFile(resolve(cwd, p), 'utf8');
    } catch (err) {
      throw new JobspecParseError([{ file: p, path: '', message: `cannot read var file: ${(err as Error).message}` }], { cause: err });
    }
    let values: unknown;
    if (p.endsWith('.json')) {
      try {
        values = JSON.parse(text);
      } catch (err) {
        throw new JobspecParseError([{ file: p, path: '', message: `invalid JSON: ${(err as Error).message}` }], { cause: err });
      }
    } else {
      values = await parseHclTree(p, text);
    }
    if (typeof values !== 'object' || values === null || Array.isArray(values)) {
      throw new JobspecParseError([{ file: p, path: '', message: 'a var file must hold NAME = VALUE pairs' }]);
    }
    Object.assign(merged, values);
  }
  return merged;
}

function looksLikeJson(filename: string, source: string): boolean {
  return filename.endsWith('.json') || source.trimStart().startsWith('{');
}

/**
 * Parses a job file's text into a JobDraft (no defaults). Throws JobspecParseError listing
 * every problem (syntax, unknown attributes or blocks, wrong types, variables).
 */
export async function parseJobspec(source: string, opts: JobspecOptions = {}): Promise<JobDraft> {
  const file = opts.filename ?? '<input>';
  const ctx = new DecodeContext(file, source);
  const cli = Array.isArray(opts.vars) ? parseVarFlags(opts.vars) : { ...(opts.vars as Record<string, string> | undefined) };
  const files = await readVarFiles(opts.varFiles ?? [], opts.cwd ?? process.cwd());
  const env = envVariables(opts.env);

  let draft: JobDraft | undefined;
  if (looksLikeJson(file, source)) {
    let value: unknown;
    try {
      value = JSON.parse(source);
    } catch (err) {
      throw new JobspecParseError([{ file, path: '', message: `invalid JSON: ${(err as Error).message}` }], { cause: err });
    }
    const isHclJson = typeof value === 'object' && value !== null && 'job' in value && !('Job' in value);
    if (isHclJson) {
      draft = decodeHclTree(value as Record<string, unknown>, ctx, { cli, files, env }, fileAccess(opts));
    } else {
      draft = jobFromApiJson(value, ctx);
    }
  } else {
    // The context keeps the text as written: the rewrite keeps every line where it was.
    draft = decodeHclTree(await parseHclTree(file, rewriteTaskConfigBlocks(source)), ctx, { cli, files, env }, fileAccess(opts));
  }
  if (ctx.problems.length > 0 || draft === undefined) throw new JobspecParseError(ctx.problemsInLineOrder());
  return draft;
}

function fileAccess(opts: JobspecOptions): FileAccess {
  return opts.fileFunctions ? { allow: true, baseDir: opts.fileFunctions.baseDir } : { allow: false, baseDir: '.' };
}

function decodeHclTree(
  tree: Record<string, unknown>,
  ctx: DecodeContext,
  inputs: VariableInputs,
  access: FileAccess,
): JobDraft | undefined {
  const vars = resolveVariables(tree, inputs, ctx);
  if (ctx.problems.length > 0) return undefined;
  const resolved = evaluateJobTree(tree, vars, ctx, { files: access });
  // Decoding with unresolved variables would only repeat the same problem as type errors.
  if (ctx.problems.length > 0) return undefined;
  return jobFromHclTree(resolved, ctx);
}

/** Reads and parses a job file; see parseJobspec. The file name appears in every message. */
export async function parseJobspecFile(path: string, opts: Omit<JobspecOptions, 'filename'> = {}): Promise<JobDraft> {
  let source: string;
  try {
    source = await readFile(resolve(opts.cwd ?? process.cwd(), path), 'utf8');
  } catch (err) {
    throw new JobspecParseError([{ file: path, path: '', message: `cannot read job file: ${(err as Error).message}` }], { cause: err });
  }
  // The user's own file on the user's machine: its file functions read beside it, as Nomad's CLI.
  const baseDir = dirname(resolve(opts.cwd ?? process.cwd(), path));
  return parseJobspec(source, { ...opts, filename: path, fileFunctions: opts.fileFunctions ?? { baseDir } });
}

/**
 * Parses, canonicalizes (Nomad's defaults) and validates a job file: the Job a server would
 * store. Throws JobspecParseError or JobValidationError.
 */
export async function loadJobFile(path: string, opts: Omit<JobspecOptions, 'filename'> & { namespace?: string } & ValidateJobOptions = {}): Promise<Job> {
  const draft = await parseJobspecFile(path, opts);
  // A file that names no namespace goes where the command says (-namespace, NOMAD_NAMESPACE), as Nomad's CLI.
  if (!draft.Namespace && opts.namespace) draft.Namespace = opts.namespace;
  const job = canonicalizeJob(draft);
  assertValidJob(job, opts.maxPriority !== undefined ? { maxPriority: opts.maxPriority } : {});
  return job;
}
