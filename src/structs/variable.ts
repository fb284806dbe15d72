/**
 * Nomad's variables: small secret maps of strings stored at a path in a namespace
 * (`/v1/var/:path`), read by templates (`nomadVar`) and the `var` CLI. The path rules and size
 * limit are Nomad's: URL-safe characters only, at most 128 of them, nothing under the reserved
 * `nomad/` directory but `nomad/jobs…` and `nomad/job-templates/<name>`, items at most 64 KiB.
 */
import { CaravanError } from './caravan-error.js';

/**
 * Nomad's VariableLock: who holds a variable's lock (ID, given at acquire and needed to renew,
 * release, write or delete), its TTL and the delay after an expiry before anyone may acquire
 * again — Go duration strings as in Nomad's API ("15s").
 */
export interface VariableLock {
  ID: string;
  TTL: string;
  LockDelay: string;
}

/** Nomad's VariableMetadata: what a list answers (no items); Lock only while the variable is locked. */
export interface VariableMetadata {
  Namespace: string;
  Path: string;
  CreateIndex: number;
  CreateTime: number;
  ModifyIndex: number;
  ModifyTime: number;
  Lock?: VariableLock;
}

/** Nomad's Variable (VariableDecrypted): the metadata and the items. */
export interface Variable extends VariableMetadata {
  Items: Record<string, string>;
}

/** What a write carries before the FSM stamps its indexes and times. */
export type VariableInput = Pick<Variable, 'Namespace' | 'Path' | 'Items'>;

/** Nomad's maxVariableSize: keys and values together. */
export const MAX_VARIABLE_SIZE = 65536;

const VALID_PATH = /^[a-zA-Z0-9\-_~/]{1,128}$/;

/** Refusal of a variable write, in Nomad's words. */
export class VariableInvalidError extends CaravanError<'VARIABLE_INVALID'> {
  constructor(reason: string) {
    super('VARIABLE_INVALID', { reason });
    this.name = 'VariableInvalidError';
  }
}

/** Why `path` is not a variable path Nomad accepts, or undefined when it is. */
export function variablePathProblem(path: string): string | undefined {
  if (path.length === 0) return 'variable requires path';
  if (!VALID_PATH.test(path)) return `invalid path ${JSON.stringify(path)}`;
  const parts = path.split('/');
  if (parts[0] !== 'nomad') return undefined;
  if (parts.length === 1) return '"nomad" is a reserved top-level directory path, but you may write variables to "nomad/jobs", "nomad/job-templates", or below';
  if (parts[1] === 'jobs') return undefined;
  if (parts[1] === 'job-templates') {
    return parts.length === 3
      ? undefined
      : '"nomad/job-templates" is a reserved directory path, but you may write variables at the level below it, for example, "nomad/job-templates/template-name"';
  }
  return 'only paths at "nomad/jobs" or "nomad/job-templates" and below are valid paths under the top-level "nomad" directory';
}

/**
 * Admits a variable written at `path` in `namespace` from its API JSON (the body's own Path and
 * Namespace give way to the route's, as Nomad's HTTP layer sets them). VARIABLE_INVALID names
 * the problem.
 */
export function admitVariable(raw: unknown, namespace: string, path: string): VariableInput {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw new VariableInvalidError('variable must be a JSON object');
  if (namespace === '*') throw new VariableInvalidError('can not target wildcard ("*")namespace');
  const items = (raw as Record<string, unknown>)['Items'];
  if (items === undefined || items === null || (typeof items === 'object' && !Array.isArray(items) && Object.keys(items).length === 0)) {
    throw new VariableInvalidError('variable missing required Items object');
  }
  if (typeof items !== 'object' || Array.isArray(items)) throw new VariableInvalidError('Items must be an object of strings');
  let size = 0;
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(items as Record<string, unknown>)) {
    if (typeof v !== 'string') throw new VariableInvalidError(`Items[${JSON.stringify(k)}] must be a string`);
    size += Buffer.byteLength(k) + Buffer.byteLength(v);
    out[k] = v;
  }
  if (size > MAX_VARIABLE_SIZE) throw new VariableInvalidError('variables are limited to 64KiB in total size');
  const problem = variablePathProblem(path);
  if (problem) throw new VariableInvalidError(problem);
  return { Namespace: namespace, Path: path, Items: out };
}

/** A variable's list entry (no items; the lock without its ID, which only its holder knows). */
export function variableMetadata(v: VariableMetadata): VariableMetadata {
  const m: VariableMetadata = { Namespace: v.Namespace, Path: v.Path, CreateIndex: v.CreateIndex, CreateTime: v.CreateTime, ModifyIndex: v.ModifyIndex, ModifyTime: v.ModifyTime };
  if (v.Lock) m.Lock = hiddenLock(v.Lock);
  return m;
}

/** A variable as anyone but its lock's holder sees it: the lock's ID left out. */
export function publicVariable(v: Variable): Variable {
  return v.Lock ? { ...v, Lock: hiddenLock(v.Lock) } : v;
}

function hiddenLock(l: VariableLock): VariableLock {
  return { ID: '', TTL: l.TTL, LockDelay: l.LockDelay };
}

/** The lock ID a request body carries (`Lock.ID`), or undefined. */
export function lockIdOf(raw: unknown): string | undefined {
  if (raw === null || typeof raw !== 'object') return undefined;
  const lock = (raw as Record<string, unknown>)['Lock'];
  if (lock === null || typeof lock !== 'object') return undefined;
  const id = (lock as Record<string, unknown>)['ID'];
  return typeof id === 'string' && id !== '' ? id : undefined;
}
