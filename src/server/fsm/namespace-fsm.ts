/**
 * How the FSM applies namespace commands. A delete is checked whole before anything changes
 * (the default namespace, or one holding a job that is not dead or a host volume, refuses it,
 * as Nomad does), so a refused command leaves the state as it was.
 */
import { CaravanError } from '../../structs/caravan-error.js';
import { DEFAULT_NAMESPACE, type Namespace } from '../../structs/namespace.js';
import { Table } from '../state/state-reader.js';
import type { StateStore } from '../state/state-store.js';
import type { NamespaceDeleteCommand, NamespaceUpsertCommand } from './commands.js';

/** The region named in NAMESPACE_IN_USE: Caravan is one region. */
const REGION = 'global';

export function applyNamespaceUpsert(state: StateStore, cmd: NamespaceUpsertCommand, index: number): void {
  for (const ns of cmd.Namespaces) {
    const prev = state.namespaceTable.get(ns.Name);
    state.namespaceTable.put({ ...ns, CreateIndex: prev?.CreateIndex ?? index, ModifyIndex: index });
  }
  state.touch(index, Table.Namespaces);
}

export function applyNamespaceDelete(state: StateStore, cmd: NamespaceDeleteCommand, index: number): void {
  for (const name of cmd.Names) {
    const refusal = namespaceDeleteRefusal(state, name);
    if (refusal) throw refusal;
  }
  for (const name of cmd.Names) state.namespaceTable.delete(name);
  state.touch(index, Table.Namespaces);
}

/** Why `name` cannot be deleted now, or undefined when it can (or does not exist). */
export function namespaceDeleteRefusal(state: StateStore, name: string): CaravanError | undefined {
  if (name === DEFAULT_NAMESPACE) return new CaravanError('NAMESPACE_DEFAULT_UNDELETABLE', {});
  if (state.jobs(name).some((j) => j.Status !== 'dead')) return new CaravanError('NAMESPACE_IN_USE', { namespace: name, region: REGION });
  // Nomad 1.10 refuses too: the volumes (and their directories on the nodes) would be left with no namespace to delete them from.
  if (state.hostVolumes(name).length > 0) return new CaravanError('NAMESPACE_HAS_VOLUMES', { namespace: name, region: REGION });
  return undefined;
}

/**
 * Makes a namespace a job names exist. Only log entries written before namespaces were objects
 * need it: the job endpoint refuses a job in a namespace that does not exist.
 */
export function ensureJobNamespace(state: StateStore, name: string, index: number): void {
  if (state.namespaceTable.get(name)) return;
  const ns: Namespace = {
    Name: name,
    Description: '',
    Quota: '',
    Capabilities: null,
    NodePoolConfiguration: null,
    Meta: null,
    CreateIndex: index,
    ModifyIndex: index,
  };
  state.namespaceTable.put(ns);
  state.touch(index, Table.Namespaces);
}
