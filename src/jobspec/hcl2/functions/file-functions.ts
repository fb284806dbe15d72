/**
 * go-cty-funcs' filesystem functions: paths are relative to the job file's directory. On the
 * server (`PUT /v1/jobs/parse`) they are disabled, as Nomad disables them there: a request
 * must not read the server's files. The CLI, which runs as the user, allows them as Nomad's
 * CLI does.
 */
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import type { HclValue } from '../expression-ast.js';
import type { EvalBudget } from '../eval-budget.js';
import type { HclFunction } from '../expression-evaluator.js';
import { evalError, HclEvalError, HclEvalErrorCode } from '../hcl-eval-error.js';
import { toStr } from '../hcl-value.js';
import { defineFunction } from './define-function.js';

/** Where file functions may read. */
export interface FileAccess {
  /** Whether filesystem functions work at all (false on the server). */
  allow: boolean;
  /** Directory relative paths resolve against: the job file's. */
  baseDir: string;
}

/** Largest file `file()`/`filebase64()` reads. */
export const MAX_FILE_BYTES = 4 * 1024 * 1024;

function disabled(name: string): HclFunction {
  return defineFunction(0, Infinity, () => {
    throw new HclEvalError(HclEvalErrorCode.FileAccess, `filesystem function ${name}() is disabled here: the server does not read files for a job; run the command where the file is`);
  });
}

function readBytes(access: FileAccess, path: string): Buffer {
  const full = resolve(access.baseDir, expandHome(path));
  let size: number;
  try {
    const st = statSync(full);
    if (!st.isFile()) throw evalError(`${JSON.stringify(path)} is not a regular file`);
    size = st.size;
  } catch (err) {
    if (err instanceof HclEvalError) throw err;
    throw evalError(`failed to read file ${JSON.stringify(path)}: ${(err as Error).message}`);
  }
  if (size > MAX_FILE_BYTES) throw new HclEvalError(HclEvalErrorCode.Limit, `file ${JSON.stringify(path)} is larger than ${MAX_FILE_BYTES} bytes`);
  return readFileSync(full);
}

function expandHome(p: string): string {
  if (p === '~') return homedir();
  if (p.startsWith('~/')) return join(homedir(), p.slice(2));
  return p;
}

/** A doublestar glob as a RegExp over `/`-separated relative paths. */
function globRegex(pattern: string): RegExp {
  let re = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '*' && pattern[i + 1] === '*') {
      const slash = pattern[i + 2] === '/';
      re += slash ? '(?:[^/]*(?:/[^/]*)*/)?' : '.*';
      i += slash ? 2 : 1;
    } else if (c === '*') {
      re += '[^/]*';
    } else if (c === '?') {
      re += '[^/]';
    } else if (c === '[') {
      const end = pattern.indexOf(']', i + 1);
      if (end < 0) throw evalError(`invalid glob pattern ${JSON.stringify(pattern)}`);
      re += `[${pattern.slice(i + 1, end).replace(/^!/, '^').replace(/\\/g, '\\\\')}]`;
      i = end;
    } else if (c === '{') {
      const end = pattern.indexOf('}', i + 1);
      if (end < 0) throw evalError(`invalid glob pattern ${JSON.stringify(pattern)}`);
      re += `(?:${pattern.slice(i + 1, end).split(',').map(escapeRe).join('|')})`;
      i = end;
    } else {
      re += escapeRe(c);
    }
  }
  return new RegExp(`^${re}$`);
}

function escapeRe(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}

/** Files under `root` matching `pattern`, as paths relative to root, sorted; bounded by the budget. */
function fileset(access: FileAccess, path: string, pattern: string, budget: EvalBudget): HclValue {
  const root = resolve(access.baseDir, expandHome(path));
  const re = globRegex(pattern);
  const out: string[] = [];
  const walk = (dir: string, depth: number): void => {
    if (depth > 32) return;
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      budget.tick();
      const full = join(dir, e.name);
      const rel = relative(root, full).split(sep).join('/');
      if (e.isDirectory()) walk(full, depth + 1);
      else if (e.isFile() && re.test(rel)) out.push(rel);
    }
  };
  walk(root, 0);
  budget.collection(out.length);
  return out.sort();
}

/** The filesystem functions, enabled or disabled by `access`. */
export function fileFunctions(access: FileAccess): Record<string, HclFunction> {
  const fns: Record<string, HclFunction> = {
    abspath: defineFunction(1, 1, ([p]) => resolve(access.baseDir, toStr(p!, 'path'))),
    basename: defineFunction(1, 1, ([p]) => basename(toStr(p!, 'path'))),
    dirname: defineFunction(1, 1, ([p]) => dirname(toStr(p!, 'path'))),
    pathexpand: defineFunction(1, 1, ([p]) => expandHome(toStr(p!, 'path'))),
    file: defineFunction(1, 1, ([p]) => {
      const bytes = readBytes(access, toStr(p!, 'path'));
      const text = bytes.toString('utf8');
      if (!Buffer.from(text, 'utf8').equals(bytes)) throw evalError(`contents of ${JSON.stringify(p)} are not valid UTF-8; use filebase64 to read binary files`);
      return text;
    }),
    filebase64: defineFunction(1, 1, ([p]) => readBytes(access, toStr(p!, 'path')).toString('base64')),
    fileexists: defineFunction(1, 1, ([p]) => {
      const full = resolve(access.baseDir, expandHome(toStr(p!, 'path')));
      if (!existsSync(full)) return false;
      if (!statSync(full).isFile()) throw evalError(`${JSON.stringify(p)} is not a regular file`);
      return true;
    }),
    fileset: defineFunction(2, 2, ([p, pat], budget) => fileset(access, toStr(p!, 'path'), toStr(pat!, 'pattern'), budget)),
  };
  if (access.allow) return fns;
  return Object.fromEntries(Object.keys(fns).map((name) => [name, disabled(name)]));
}
