/**
 * The dynamic host volumes of the cluster (Nomad's host_volumes table), by ID, as the FSM
 * applies HostVolumeUpsert and HostVolumeDelete and as node registrations mark them ready.
 * Copy-on-write (a CowTable), so a command that fails part-way leaves the table as it was.
 * Values are replaced, never mutated, so a reader may keep what it got.
 */
import type { HostVolume } from '../../structs/dynamic-host-volume.js';
import { CowTable, type Epoch, type EpochClock } from './cow-table.js';

const byNamespaceThenId = (a: HostVolume, b: HostVolume): number =>
  a.Namespace < b.Namespace ? -1 : a.Namespace > b.Namespace ? 1 : a.ID < b.ID ? -1 : a.ID > b.ID ? 1 : 0;

export class HostVolumeTable {
  private readonly byId: CowTable<string, HostVolume>;

  constructor(epochs: EpochClock) {
    this.byId = new CowTable<string, HostVolume>('host_volumes', epochs);
  }

  get(id: string): HostVolume | undefined {
    return this.byId.get(id);
  }

  /** The volume as it was at a snapshot's epoch. */
  getAt(epoch: Epoch, id: string): HostVolume | undefined {
    return this.byId.getAt(epoch, id);
  }

  /** The volumes of `namespace` (`*`: every one) whose ID starts with `prefix`, by namespace then ID. */
  list(namespace: string, prefix = ''): HostVolume[] {
    const out: HostVolume[] = [];
    for (const v of this.byId.values()) if ((namespace === '*' || v.Namespace === namespace) && v.ID.startsWith(prefix)) out.push(v);
    return out.sort(byNamespaceThenId);
  }

  /** The volumes placed on node `nodeId`, by ID. */
  byNode(nodeId: string): HostVolume[] {
    const out: HostVolume[] = [];
    for (const v of this.byId.values()) if (v.NodeID === nodeId) out.push(v);
    return out.sort(byNamespaceThenId);
  }

  /** Inserts or replaces a volume (already stamped with its indexes and times). */
  put(v: HostVolume): void {
    this.byId.set(v.ID, v);
  }

  delete(id: string): void {
    this.byId.delete(id);
  }

  serialize(): HostVolume[] {
    return this.list('*');
  }

  /** Replaces the table; a state from before dynamic host volumes has none. */
  restore(all: readonly HostVolume[] | undefined): void {
    this.byId.clearForRestore();
    for (const v of all ?? []) this.byId.set(v.ID, v);
  }
}
