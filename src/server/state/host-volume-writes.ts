/**
 * How the state store writes dynamic host volumes: the table, its index, the volume's own
 * pseudo-table (a held GET /v1/volume/host/:id) and the per-node pseudo-table of each node a
 * volume is (or was) on, so a volume's change wakes the readers of that volume and the volume
 * watch of its own node, and no other client's. Used by StateStore only, within an apply.
 */
import type { HostVolume } from '../../structs/dynamic-host-volume.js';
import type { HostVolumeTable } from './host-volume-table.js';
import type { ChangeTracker } from './change-tracker.js';
import { Table, nodeHostVolumesTableKey } from './state-reader.js';

/** Writes of the host volume table within an apply. */
export class HostVolumeWrites {
  constructor(
    private readonly table: HostVolumeTable,
    private readonly changes: Pick<ChangeTracker, 'touch' | 'touchPseudo' | 'touchObject'>,
  ) {}

  /**
   * Inserts or replaces a dynamic host volume (already stamped with its indexes): the volume
   * watches of its node (and of the node it left, if it moved) are woken, no other node's.
   */
  put(v: HostVolume, index: number): void {
    const prev = this.table.get(v.ID);
    this.table.put(v);
    this.changes.touch(index, Table.HostVolumes);
    this.changes.touchObject(Table.HostVolumes, v.ID);
    if (prev && prev.NodeID !== v.NodeID) this.changes.touchPseudo(index, nodeHostVolumesTableKey(prev.NodeID));
    this.changes.touchPseudo(index, nodeHostVolumesTableKey(v.NodeID));
  }

  /** Removes a dynamic host volume, if there is one of that ID; answers it. Wakes its node's volume watches. */
  delete(id: string, index: number): HostVolume | undefined {
    const prev = this.table.get(id);
    if (!prev) return undefined;
    this.table.delete(id);
    this.changes.touch(index, Table.HostVolumes);
    this.changes.touchObject(Table.HostVolumes, id);
    this.changes.touchPseudo(index, nodeHostVolumesTableKey(prev.NodeID));
    return prev;
  }
}
