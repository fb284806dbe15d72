/**
 * The variable endpoint (Nomad's Variables.Apply): writes and deletes a variable at a path in a
 * namespace, with optional check-and-set, and acquires, renews and releases its lock. A stale
 * check-and-set index, a write or delete of a locked variable without its lock's ID, and a lock
 * operation that does not fit (acquire of a held lock or during the delay after an expiry,
 * renew or release with another ID) are answered with the variable as it is (an empty one when
 * there is none), as Nomad answers a 409, and nothing changes. The namespace must exist. Reads
 * go straight to the state.
 */
import { randomUUID } from 'node:crypto';
import { DurationParseError, formatDuration, parseDuration } from '../../structs/duration.js';
import { admitVariable, lockIdOf, variablePathProblem, VariableInvalidError, type Variable, type VariableLock } from '../../structs/variable.js';
import { casHolds, lockAllows } from '../fsm/variable-fsm.js';
import { ServerError } from '../server-error.js';
import type { VariableWriteResult } from '../server-api.js';
import type { EndpointContext } from './endpoint-context.js';

/** Nomad's API defaults for a lock's TTL and delay (api.DefaultLockTTL, DefaultLockDelay). */
const DEFAULT_LOCK_TTL = '15s';
const DEFAULT_LOCK_DELAY = '15s';

/** The Lock block of an acquire's body: TTL and LockDelay as Go durations (VARIABLE_INVALID names a bad one). */
function admitLockParams(raw: unknown): { TTL: string; LockDelay: string } {
  const lock = raw !== null && typeof raw === 'object' ? (raw as Record<string, unknown>)['Lock'] : undefined;
  if (lock === undefined || lock === null) return { TTL: DEFAULT_LOCK_TTL, LockDelay: DEFAULT_LOCK_DELAY };
  if (typeof lock !== 'object' || Array.isArray(lock)) throw new VariableInvalidError('Lock must be an object');
  const field = (name: 'TTL' | 'LockDelay', dflt: string, min: number): string => {
    const v = (lock as Record<string, unknown>)[name];
    if (v === undefined || v === null || v === '') return dflt;
    let ns: number;
    try {
      ns = typeof v === 'number' ? v : typeof v === 'string' ? parseDuration(v) : NaN;
    } catch (err) {
      if (err instanceof DurationParseError) throw new VariableInvalidError(`Lock.${name}: invalid duration ${JSON.stringify(v)}`);
      throw err;
    }
    if (!Number.isFinite(ns) || ns < min) throw new VariableInvalidError(`Lock.${name} must be a duration of at least ${formatDuration(min)}`);
    return formatDuration(ns);
  };
  return { TTL: field('TTL', DEFAULT_LOCK_TTL, 1_000_000), LockDelay: field('LockDelay', DEFAULT_LOCK_DELAY, 0) };
}

/** The conflict Nomad answers when check-and-set expected a variable that is not there. */
function emptyVariable(): Variable {
  return { Namespace: '', Path: '', Items: {}, CreateIndex: 0, CreateTime: 0, ModifyIndex: 0, ModifyTime: 0 };
}

export class VariableEndpoint {
  constructor(private readonly ctx: EndpointContext) {}

  async setVariable(raw: unknown, namespace: string, path: string, cas?: number): Promise<VariableWriteResult> {
    const input = admitVariable(raw, namespace, path);
    this.requireNamespace(namespace);
    const { store } = this.ctx;
    const lockId = lockIdOf(raw);
    // Checked here for the common case; the FSM checks again at apply (a writer may race us).
    const before = store.variableByPath(namespace, path);
    if (!casHolds(before, cas) || !lockAllows(before, lockId)) return { index: store.latestIndex(), conflict: before ?? emptyVariable() };
    const index = await this.ctx.apply({
      Type: 'VariableSet',
      Variable: input,
      ...(cas !== undefined ? { Cas: cas } : {}),
      ...(lockId !== undefined ? { LockID: lockId } : {}),
      Now: this.ctx.nowNanos(),
    });
    const after = store.variableByPath(namespace, path);
    if (after && after.ModifyIndex === index) return { index, written: after };
    return { index, conflict: after ?? emptyVariable() };
  }

  async deleteVariable(namespace: string, path: string, cas?: number, lockId?: string): Promise<VariableWriteResult> {
    const problem = variablePathProblem(path);
    if (problem) throw new VariableInvalidError(problem);
    const { store } = this.ctx;
    const before = store.variableByPath(namespace, path);
    if (!casHolds(before, cas) || !lockAllows(before, lockId)) return { index: store.latestIndex(), conflict: before ?? emptyVariable() };
    const index = await this.ctx.apply({
      Type: 'VariableDelete',
      Namespace: namespace,
      Path: path,
      ...(cas !== undefined ? { Cas: cas } : {}),
      ...(lockId !== undefined ? { LockID: lockId } : {}),
      Now: this.ctx.nowNanos(),
    });
    const after = store.variableByPath(namespace, path);
    // Still there: another write landed first and this delete's check refused it.
    if (after && (cas !== undefined || after.Lock)) return { index, conflict: after };
    return { index };
  }

  /**
   * Acquires the variable's lock (Nomad's lock-acquire), creating the variable when there is
   * none; items in the body replace the variable's. Answers the variable with its Lock and ID.
   */
  async acquireLock(raw: unknown, namespace: string, path: string): Promise<VariableWriteResult> {
    const hasItems = hasAnyItems(raw);
    const input = hasItems ? admitVariable(raw, namespace, path) : { Namespace: namespace, Path: path, Items: {} };
    if (!hasItems) {
      if (namespace === '*') throw new VariableInvalidError('can not target wildcard ("*")namespace');
      const problem = variablePathProblem(path);
      if (problem) throw new VariableInvalidError(problem);
    }
    const params = admitLockParams(raw);
    this.requireNamespace(namespace);
    const locks = this.ctx.variableLocks();
    const { store } = this.ctx;
    const before = store.variableByPath(namespace, path);
    if (before?.Lock || locks.inDelay(namespace, path)) return { index: store.latestIndex(), conflict: before ?? emptyVariable() };
    const lock: VariableLock = { ID: randomUUID(), ...params };
    const index = await this.ctx.apply({ Type: 'VariableLock', Op: 'acquire', Variable: input, Lock: lock, Now: this.ctx.nowNanos() });
    const after = store.variableByPath(namespace, path);
    if (!after || after.Lock?.ID !== lock.ID) return { index, conflict: after ?? emptyVariable() };
    locks.arm(namespace, path, lock);
    return { index, written: after };
  }

  /** Renews the lock's TTL (Nomad's lock-renew); the body must carry the lock's ID. Answers the variable. */
  async renewLock(raw: unknown, namespace: string, path: string): Promise<VariableWriteResult> {
    const lockId = this.requireLockId(raw, path);
    const locks = this.ctx.variableLocks();
    const { store } = this.ctx;
    const v = store.variableByPath(namespace, path);
    if (!v?.Lock || v.Lock.ID !== lockId) return { index: store.latestIndex(), conflict: v ?? emptyVariable() };
    locks.arm(namespace, path, v.Lock);
    return { index: store.latestIndex(), written: v };
  }

  /** Releases the lock (Nomad's lock-release); the body carries its ID and no items. Answers the variable without its lock. */
  async releaseLock(raw: unknown, namespace: string, path: string): Promise<VariableWriteResult> {
    const lockId = this.requireLockId(raw, path);
    if (hasAnyItems(raw)) throw new VariableInvalidError('lock-release does not change the items: send only the Lock');
    const locks = this.ctx.variableLocks();
    const { store } = this.ctx;
    const before = store.variableByPath(namespace, path);
    if (!before?.Lock || before.Lock.ID !== lockId) return { index: store.latestIndex(), conflict: before ?? emptyVariable() };
    const index = await this.ctx.apply({ Type: 'VariableLock', Op: 'release', Namespace: namespace, Path: path, LockID: lockId, Now: this.ctx.nowNanos() });
    const after = store.variableByPath(namespace, path);
    if (!after || after.Lock) return { index, conflict: after ?? emptyVariable() };
    locks.cancel(namespace, path);
    return { index, written: after };
  }

  private requireLockId(raw: unknown, path: string): string {
    const problem = variablePathProblem(path);
    if (problem) throw new VariableInvalidError(problem);
    const id = lockIdOf(raw);
    if (id === undefined) throw new VariableInvalidError('Lock.ID is required');
    return id;
  }

  private requireNamespace(namespace: string): void {
    if (!this.ctx.store.namespaceByName(namespace)) throw new ServerError('NAMESPACE_NOT_FOUND', { namespace });
  }
}

/** Whether a body brings items (an acquire may come without). */
function hasAnyItems(raw: unknown): boolean {
  if (raw === null || typeof raw !== 'object') return false;
  const items = (raw as Record<string, unknown>)['Items'];
  return items !== undefined && items !== null && !(typeof items === 'object' && !Array.isArray(items) && Object.keys(items).length === 0);
}
