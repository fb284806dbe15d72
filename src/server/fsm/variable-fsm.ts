/**
 * How the FSM applies variable commands. The check-and-set index is compared here, at apply,
 * so two writers racing with the same index cannot both win: the loser's entry changes
 * nothing (and touches no table), and its endpoint, finding the variable not as it wrote it,
 * answers the conflict.
 */
import { Table } from '../server-api.js';
import type { StateStore } from '../state/state-store.js';
import type { VariableDeleteCommand, VariableSetCommand } from './commands.js';

/** Whether a check-and-set index `cas` (undefined: no check) matches the variable's current one. */
export function casHolds(current: { ModifyIndex: number } | undefined, cas: number | undefined): boolean {
  if (cas === undefined) return true;
  return (current?.ModifyIndex ?? 0) === cas;
}

export function applyVariableSet(state: StateStore, cmd: VariableSetCommand, index: number): void {
  const { Namespace, Path, Items } = cmd.Variable;
  const prev = state.variableTable.get(Namespace, Path);
  if (!casHolds(prev, cmd.Cas)) return;
  state.variableTable.put({
    Namespace,
    Path,
    Items,
    CreateIndex: prev?.CreateIndex ?? index,
    CreateTime: prev?.CreateTime ?? cmd.Now,
    ModifyIndex: index,
    ModifyTime: cmd.Now,
  });
  state.touch(index, Table.Variables);
}

export function applyVariableDelete(state: StateStore, cmd: VariableDeleteCommand, index: number): void {
  const prev = state.variableTable.get(cmd.Namespace, cmd.Path);
  if (!casHolds(prev, cmd.Cas) || !prev) return;
  state.variableTable.delete(cmd.Namespace, cmd.Path);
  state.touch(index, Table.Variables);
}
