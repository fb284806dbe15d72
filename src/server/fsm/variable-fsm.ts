/**
 * How the FSM applies variable commands. The check-and-set index is compared here, at apply,
 * so two writers racing with the same index cannot both win: the loser's entry changes
 * nothing (and touches no table), and its endpoint, finding the variable not as it wrote it,
 * answers the conflict.
 */
import { Table } from '../state/state-reader.js';
import type { StateStore } from '../state/state-store.js';
import type { VariableDeleteCommand, VariableLockCommand, VariableSetCommand } from './commands.js';

/** Whether a check-and-set index `cas` (undefined: no check) matches the variable's current one. */
export function casHolds(current: { ModifyIndex: number } | undefined, cas: number | undefined): boolean {
  if (cas === undefined) return true;
  return (current?.ModifyIndex ?? 0) === cas;
}

/** Whether a writer holding `lockId` (undefined: none) may change the variable: unlocked, or locked by that ID. */
export function lockAllows(current: { Lock?: { ID: string } } | undefined, lockId: string | undefined): boolean {
  return !current?.Lock || current.Lock.ID === lockId;
}

export function applyVariableSet(state: StateStore, cmd: VariableSetCommand, index: number): void {
  const { Namespace, Path, Items } = cmd.Variable;
  const prev = state.variableTable.get(Namespace, Path);
  if (!casHolds(prev, cmd.Cas) || !lockAllows(prev, cmd.LockID)) return;
  state.variableTable.put({
    Namespace,
    Path,
    Items,
    CreateIndex: prev?.CreateIndex ?? index,
    CreateTime: prev?.CreateTime ?? cmd.Now,
    ModifyIndex: index,
    ModifyTime: cmd.Now,
    // A write by the holder keeps the lock.
    ...(prev?.Lock ? { Lock: prev.Lock } : {}),
  });
  state.touch(index, Table.Variables);
}

export function applyVariableDelete(state: StateStore, cmd: VariableDeleteCommand, index: number): void {
  const prev = state.variableTable.get(cmd.Namespace, cmd.Path);
  if (!casHolds(prev, cmd.Cas) || !prev || !lockAllows(prev, cmd.LockID)) return;
  state.variableTable.delete(cmd.Namespace, cmd.Path);
  state.touch(index, Table.Variables);
}

export function applyVariableLock(state: StateStore, cmd: VariableLockCommand, index: number): void {
  if (cmd.Op === 'acquire') {
    const { Namespace, Path, Items } = cmd.Variable;
    const prev = state.variableTable.get(Namespace, Path);
    if (prev?.Lock) return;
    state.variableTable.put({
      Namespace,
      Path,
      // An acquire without items keeps the variable's.
      Items: Object.keys(Items).length > 0 ? Items : (prev?.Items ?? {}),
      CreateIndex: prev?.CreateIndex ?? index,
      CreateTime: prev?.CreateTime ?? cmd.Now,
      ModifyIndex: index,
      ModifyTime: cmd.Now,
      Lock: cmd.Lock,
    });
  } else {
    const prev = state.variableTable.get(cmd.Namespace, cmd.Path);
    if (!prev?.Lock || prev.Lock.ID !== cmd.LockID) return;
    const { Lock: _released, ...rest } = prev;
    state.variableTable.put({ ...rest, ModifyIndex: index, ModifyTime: cmd.Now });
  }
  state.touch(index, Table.Variables);
}
