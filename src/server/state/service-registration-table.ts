/**
 * The service registrations of the cluster (Nomad's service_registrations table), keyed by ID,
 * with indexes by service name (per namespace), allocation, node and job, as the FSM applies
 * ServiceRegistrationUpsert/Delete and removes an allocation's or a down node's registrations.
 *
 * Copy-on-write (CowTable/CowIndex), so an FSM apply that throws puts every registration back.
 * Besides the table index, each service name keeps the index at which its set of instances
 * last changed (a deletion too): a blocking `GET /v1/service/:name` answers that index, so a
 * change to one service does not answer the queries waiting on another.
 */
import type { ServiceRegistration } from '../../structs/service-registration.js';
import { CowIndex, CowTable, type EpochClock } from './cow-table.js';

const nameKey = (namespace: string, name: string): string => `${namespace}\u0000${name}`;
const jobKeyOf = (namespace: string, job: string): string => `${namespace}\u0000${job}`;

const byNamespaceNameId = (a: ServiceRegistration, b: ServiceRegistration): number =>
  a.Namespace !== b.Namespace ? (a.Namespace < b.Namespace ? -1 : 1) : a.ServiceName !== b.ServiceName ? (a.ServiceName < b.ServiceName ? -1 : 1) : a.ID < b.ID ? -1 : a.ID > b.ID ? 1 : 0;

export class ServiceRegistrationTable {
  private readonly rows: CowTable<string, ServiceRegistration>;
  private readonly byName: CowIndex;
  private readonly byAlloc: CowIndex;
  private readonly byNode: CowIndex;
  private readonly byJob: CowIndex;
  /** Per service name (namespace\0name): the index of the last change to its instances. */
  private readonly nameIndex: CowTable<string, number>;

  constructor(epochs: EpochClock) {
    this.rows = new CowTable('service_registrations', epochs);
    this.byName = new CowIndex('idx_services_name', epochs);
    this.byAlloc = new CowIndex('idx_services_alloc', epochs);
    this.byNode = new CowIndex('idx_services_node', epochs);
    this.byJob = new CowIndex('idx_services_job', epochs);
    this.nameIndex = new CowTable('service_name_index', epochs);
  }

  get(id: string): ServiceRegistration | undefined {
    return this.rows.get(id);
  }

  get size(): number {
    return this.rows.size;
  }

  /** Every registration of `namespace` (`*`: all), by namespace, name, then ID. */
  list(namespace: string): ServiceRegistration[] {
    const out: ServiceRegistration[] = [];
    for (const r of this.rows.values()) if (namespace === '*' || r.Namespace === namespace) out.push(r);
    return out.sort(byNamespaceNameId);
  }

  /** Calls `fn` with every registration of `namespace` (`*`: all), in no particular order. */
  forEach(namespace: string, fn: (r: ServiceRegistration) => void): void {
    for (const r of this.rows.values()) if (namespace === '*' || r.Namespace === namespace) fn(r);
  }

  /** The instances of one service, by ID. */
  byServiceName(namespace: string, name: string): ServiceRegistration[] {
    return this.lookup(this.byName.get(nameKey(namespace, name)));
  }

  byAllocId(allocId: string): ServiceRegistration[] {
    return this.lookup(this.byAlloc.get(allocId));
  }

  byNodeId(nodeId: string): ServiceRegistration[] {
    return this.lookup(this.byNode.get(nodeId));
  }

  byJobId(namespace: string, jobId: string): ServiceRegistration[] {
    return this.lookup(this.byJob.get(jobKeyOf(namespace, jobId)));
  }

  /** The index at which the instances of a service last changed (0: never). */
  serviceIndex(namespace: string, name: string): number {
    return this.nameIndex.get(nameKey(namespace, name)) ?? 0;
  }

  /** Inserts or replaces a registration (already stamped with its indexes). */
  put(r: ServiceRegistration, index: number): void {
    const prev = this.rows.get(r.ID);
    if (prev) this.unindex(prev, index);
    this.rows.set(r.ID, r);
    this.byName.add(nameKey(r.Namespace, r.ServiceName), r.ID);
    this.byAlloc.add(r.AllocID, r.ID);
    this.byNode.add(r.NodeID, r.ID);
    this.byJob.add(jobKeyOf(r.Namespace, r.JobID), r.ID);
    this.nameIndex.set(nameKey(r.Namespace, r.ServiceName), index);
  }

  /** Removes a registration; false when there is none of that ID. */
  delete(id: string, index: number): boolean {
    const prev = this.rows.get(id);
    if (!prev) return false;
    this.unindex(prev, index);
    this.rows.delete(id);
    return true;
  }

  serialize(): ServiceRegistration[] {
    return this.list('*');
  }

  /** Replaces the table (at startup or a snapshot restore); a state from before services has none. */
  restore(all: readonly ServiceRegistration[] | undefined): void {
    this.rows.clearForRestore();
    this.nameIndex.clearForRestore();
    for (const i of [this.byName, this.byAlloc, this.byNode, this.byJob]) i.clearForRestore();
    for (const r of all ?? []) {
      this.put(r, r.ModifyIndex);
      const k = nameKey(r.Namespace, r.ServiceName);
      this.nameIndex.set(k, Math.max(this.nameIndex.get(k) ?? 0, r.ModifyIndex));
    }
  }

  private unindex(prev: ServiceRegistration, index: number): void {
    this.byName.remove(nameKey(prev.Namespace, prev.ServiceName), prev.ID);
    this.byAlloc.remove(prev.AllocID, prev.ID);
    this.byNode.remove(prev.NodeID, prev.ID);
    this.byJob.remove(jobKeyOf(prev.Namespace, prev.JobID), prev.ID);
    this.nameIndex.set(nameKey(prev.Namespace, prev.ServiceName), index);
  }

  private lookup(ids: ReadonlySet<string>): ServiceRegistration[] {
    const out: ServiceRegistration[] = [];
    for (const id of ids) {
      const r = this.rows.get(id);
      if (r) out.push(r);
    }
    return out.sort(byNamespaceNameId);
  }
}
