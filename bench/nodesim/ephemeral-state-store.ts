/**
 * The simulated nodes' client state store: it keeps the node's metadata (dynamic node meta,
 * host volumes) and forgets allocations and tasks. A real client writes them so that the next
 * agent on its data dir can reattach to running tasks; a simulated node is never restarted and
 * its mock tasks end with the process, so nothing would ever read them back. MemoryStateDb kept a
 * JSON copy of every allocation (with its job) and of every task's state and driver handle:
 * ~6 KB an allocation, 300 MB at 50,000.
 */
import type { ClientStateStore, StoredAlloc } from '../../src/client/state/state-db.js';

/** A ClientStateStore that keeps only metadata; allAllocs() is always empty. */
export class EphemeralStateStore implements ClientStateStore {
  private readonly meta = new Map<string, string>();

  putAlloc(): void {}
  deleteAlloc(): void {}
  putTaskHandle(): void {}
  putTaskState(): void {}
  putTaskHandleAndState(): void {}
  allAllocs(): StoredAlloc[] {
    return [];
  }
  getMeta(key: string): string | undefined {
    return this.meta.get(key);
  }
  putMeta(key: string, value: string): void {
    this.meta.set(key, value);
  }
  close(): void {}
}
