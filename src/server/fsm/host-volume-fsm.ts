/**
 * How the FSM applies dynamic host volume commands, and how a node's registration moves its
 * volumes along: a volume whose node now fingerprints it (its ID in Node.HostVolumes) is ready,
 * as Nomad's state store marks it when the node's fingerprint arrives.
 */
import { hostVolumeView, HostVolumeState, type HostVolume } from '../../structs/dynamic-host-volume.js';
import type { StreamEvent } from '../events/event.js';
import type { Node } from '../../structs/index.js';
import { Table } from '../state/state-reader.js';
import type { StateStore } from '../state/state-store.js';
import type { HostVolumeDeleteCommand, HostVolumeUpsertCommand } from './commands.js';

export function applyHostVolumeUpsert(state: StateStore, cmd: HostVolumeUpsertCommand, index: number, ev: StreamEvent[]): void {
  for (const v of cmd.Volumes) {
    const prev = state.hostVolumeTable.get(v.ID);
    const node = state.nodeById(v.NodeID);
    const stored: HostVolume = {
      ...v,
      CreateIndex: prev?.CreateIndex ?? index,
      CreateTime: prev?.CreateTime ?? cmd.Now,
      ModifyIndex: index,
      ModifyTime: cmd.Now,
    };
    const put = node ? withFingerprintState(stored, node) : stored;
    state.putHostVolume(put, index);
    ev.push(hostVolumeEvent('HostVolumeRegistered', put, index));
  }
  state.touch(index, Table.HostVolumes);
}

export function applyHostVolumeDelete(state: StateStore, cmd: HostVolumeDeleteCommand, index: number, ev: StreamEvent[]): void {
  for (const id of cmd.IDs) {
    const prev = state.deleteHostVolume(id, index);
    if (!prev) continue;
    ev.push(hostVolumeEvent('HostVolumeDeleted', prev, index));
  }
  state.touch(index, Table.HostVolumes);
}

/**
 * After node `node` registered at `index`: its pending volumes that it now fingerprints become
 * ready, and ready ones it no longer offers become unavailable. Touches the table (and the node's
 * volume watches) only when one changed.
 */
export function updateHostVolumesFromNode(state: StateStore, node: Node, index: number, ev: StreamEvent[]): void {
  for (const v of state.hostVolumeTable.byNode(node.ID)) {
    const next = withFingerprintState(v, node);
    if (next.State === v.State) continue;
    const put = { ...next, ModifyIndex: index };
    state.putHostVolume(put, index);
    ev.push(hostVolumeEvent('HostVolumeRegistered', put, index));
  }
}

/** The volume with the state its node's fingerprint gives it (unchanged before the plugin ran). */
function withFingerprintState(v: HostVolume, node: Node): HostVolume {
  if (v.HostPath === '' || v.DeleteRequested) return v;
  const offered = Object.values(node.HostVolumes ?? {}).some((hv) => hv.ID === v.ID);
  if (offered && v.State !== HostVolumeState.Ready) return { ...v, State: HostVolumeState.Ready };
  if (!offered && v.State === HostVolumeState.Ready) return { ...v, State: HostVolumeState.Unavailable };
  return v;
}

/** The event stream's record of a volume change (Nomad's HostVolume topic), keyed by volume ID. */
function hostVolumeEvent(type: 'HostVolumeRegistered' | 'HostVolumeDeleted', v: HostVolume, index: number): StreamEvent {
  return { Topic: 'HostVolume', Type: type, Key: v.ID, Namespace: v.Namespace, FilterKeys: [v.Name], Index: index, Payload: { HostVolume: hostVolumeView(v) } };
}
