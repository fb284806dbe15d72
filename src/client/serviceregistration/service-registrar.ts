/**
 * The client's native service registrar (Nomad's nsd provider): alloc runners tell it the
 * registrations each allocation should have (`set`), and it writes the difference to the
 * servers — new or changed instances registered, vanished ones deregistered — at once, one
 * write at a time, coalescing whatever arrives meanwhile. A failed write is retried with
 * backoff until it lands or is superseded; nothing is lost while the servers are away.
 */
import type { Logger } from 'pino';
import type { ServiceRegistrationInput } from '../../structs/service-registration.js';
import type { Clock } from '../../time/clock.js';
import { ClientError, ClientErrorCode, errorMessage } from '../client-error.js';

/** What the registrar writes through (ServerConnection's registerServices / deregisterServices). */
export interface ServiceRegistrationWriter {
  registerServices(services: ServiceRegistrationInput[]): Promise<void>;
  deregisterServices(ids: string[]): Promise<void>;
}

const RETRY_BASE_MS = 250;
const RETRY_MAX_MS = 10_000;

export class ServiceRegistrar {
  /** What each allocation should have registered, by registration ID. */
  private readonly desired = new Map<string, Map<string, ServiceRegistrationInput>>();
  /** What the servers have acknowledged, by allocation then ID (as JSON, to compare). */
  private readonly acked = new Map<string, Map<string, string>>();
  private readonly dirty = new Set<string>();
  private flushing: Promise<void> | null = null;
  private failures = 0;
  private readonly stopCtl = new AbortController();

  constructor(
    private readonly writer: ServiceRegistrationWriter,
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {}

  /** Sets what `allocId` should have registered (empty: nothing); the write starts at once. */
  set(allocId: string, regs: readonly ServiceRegistrationInput[]): void {
    const next = new Map(regs.map((r) => [r.ID, r]));
    const prev = this.desired.get(allocId);
    if (prev && sameKeysAndValues(prev, next)) return;
    if (next.size === 0 && !this.acked.has(allocId)) {
      this.desired.delete(allocId);
      return;
    }
    this.desired.set(allocId, next);
    this.dirty.add(allocId);
    this.kick();
  }

  /**
   * Writes every allocation's registrations again (the node has just registered: the servers
   * may have removed them while it was marked down, or refused them before it was known).
   * Unchanged registrations change nothing on the servers.
   */
  resync(): void {
    for (const [allocId, want] of this.desired) {
      // An allocation still to deregister keeps what it must remove; the others send all again.
      if (want.size > 0) this.acked.delete(allocId);
      this.dirty.add(allocId);
    }
    this.kick();
  }

  /** The registrations the servers acknowledged for an allocation (tests, diagnostics). */
  registered(allocId: string): string[] {
    return [...(this.acked.get(allocId)?.keys() ?? [])];
  }

  /** Resolves once every change so far is written (or the registrar stopped). */
  async settled(): Promise<void> {
    while (this.flushing) await this.flushing;
  }

  /** Stops writing (agent shutdown): registrations stay as they are on the servers. */
  stop(): void {
    this.stopCtl.abort();
  }

  private kick(): void {
    if (this.flushing || this.stopCtl.signal.aborted) return;
    this.flushing = this.flushLoop().finally(() => {
      this.flushing = null;
      if (this.dirty.size > 0 && !this.stopCtl.signal.aborted) this.kick();
    });
  }

  private async flushLoop(): Promise<void> {
    while (this.dirty.size > 0 && !this.stopCtl.signal.aborted) {
      const allocs = [...this.dirty];
      this.dirty.clear();
      const upserts: ServiceRegistrationInput[] = [];
      const deletes: string[] = [];
      for (const a of allocs) {
        const want = this.desired.get(a) ?? new Map<string, ServiceRegistrationInput>();
        const have = this.acked.get(a) ?? new Map<string, string>();
        for (const [id, r] of want) if (have.get(id) !== JSON.stringify(r)) upserts.push(r);
        for (const id of have.keys()) if (!want.has(id)) deletes.push(id);
      }
      try {
        if (upserts.length > 0) await this.writer.registerServices(upserts);
        if (deletes.length > 0) await this.writer.deregisterServices(deletes);
        this.failures = 0;
        for (const a of allocs) this.acknowledge(a, upserts, deletes);
      } catch (err) {
        if (err instanceof ClientError && err.code === ClientErrorCode.ServerRejected) {
          // Refused (the allocation moved on, is not this node's, or the node is not registered
          // yet): retrying now changes nothing; the next node registration resyncs.
          this.logger.error({ err: errorMessage(err), allocs }, 'servers refused service registrations');
          continue;
        }
        for (const a of allocs) this.dirty.add(a);
        const delay = Math.min(RETRY_BASE_MS * 2 ** this.failures, RETRY_MAX_MS);
        this.failures++;
        this.logger.warn({ err: errorMessage(err), retryMs: delay }, 'writing service registrations failed; retrying');
        await this.clock.sleep(delay, this.stopCtl.signal).catch(() => undefined);
      }
    }
  }

  private acknowledge(allocId: string, upserts: readonly ServiceRegistrationInput[], deletes: readonly string[]): void {
    const have = this.acked.get(allocId) ?? new Map<string, string>();
    for (const r of upserts) if (r.AllocID === allocId) have.set(r.ID, JSON.stringify(r));
    for (const id of deletes) have.delete(id);
    if (have.size > 0) this.acked.set(allocId, have);
    else {
      this.acked.delete(allocId);
      if ((this.desired.get(allocId)?.size ?? 0) === 0) this.desired.delete(allocId);
    }
  }
}

function sameKeysAndValues(a: Map<string, ServiceRegistrationInput>, b: Map<string, ServiceRegistrationInput>): boolean {
  if (a.size !== b.size) return false;
  for (const [k, v] of a) {
    const w = b.get(k);
    if (!w || JSON.stringify(w) !== JSON.stringify(v)) return false;
  }
  return true;
}
