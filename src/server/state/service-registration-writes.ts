/**
 * How the state store removes service registrations — by ID, or all of an allocation's once it
 * is client-terminal, lost or collected, as Nomad's state store does — and keeps the ones the
 * apply in progress removed, for the FSM's ServiceDeregistration events. Upserts write the table
 * directly (service-registration-fsm.ts). Used by StateStore only, within an apply.
 */
import type { ServiceRegistration } from '../../structs/service-registration.js';
import type { ServiceRegistrationTable } from './service-registration-table.js';
import type { ChangeTracker } from './change-tracker.js';
import { Table } from './state-reader.js';

/** Removals of registrations within an apply, and what they removed. */
export class ServiceRegistrationWrites {
  /** Registrations removed in this apply, for the FSM's ServiceDeregistration events. */
  private removed: ServiceRegistration[] = [];

  constructor(
    private readonly table: ServiceRegistrationTable,
    private readonly changes: Pick<ChangeTracker, 'touch'>,
  ) {}

  /** Removes registrations by ID (those that exist); answers the ones removed. */
  deleteByIds(ids: Iterable<string>, index: number): ServiceRegistration[] {
    const gone: ServiceRegistration[] = [];
    for (const id of ids) {
      const r = this.table.get(id);
      if (r && this.table.delete(id, index)) gone.push(r);
    }
    if (gone.length > 0) {
      this.changes.touch(index, Table.Services);
      for (const r of gone) this.removed.push(r);
    }
    return gone;
  }

  /** Removes an allocation's registrations; answers the ones removed. */
  deleteForAlloc(allocId: string, index: number): ServiceRegistration[] {
    const regs = this.table.byAllocId(allocId);
    return regs.length === 0 ? regs : this.deleteByIds(regs.map((r) => r.ID), index);
  }

  /** The registrations removed since the last call (this apply's), emptied. */
  takeRemoved(): ServiceRegistration[] {
    const out = this.removed;
    this.removed = [];
    return out;
  }

  /** The apply in progress failed: what it removed was put back, so there is nothing to report. */
  discard(): void {
    this.removed = [];
  }
}
