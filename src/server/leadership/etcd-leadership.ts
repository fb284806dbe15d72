/**
 * Leadership on etcd. Each server holds a lease (kept alive every ttl/3) and registers itself as
 * `<prefix>members/<id>` with it. The leader is whoever created `<prefix>leader` (with its lease)
 * in a transaction that requires the key to be absent; the key's create revision is the fence
 * the etcd log backend checks on every append, so once the lease lapses and another server
 * creates the key, the old leader's writes fail even before it notices. It notices on its own
 * as well: when no keep-alive succeeded for a whole TTL (a pause, a partition, etcd down) it
 * steps down and starts a new session (a new lease, registration and campaign).
 */
import type { Etcd3, IKeyValue, Lease, Watcher } from 'etcd3';
import type pino from 'pino';
import type { Leadership, ServerMember } from './leadership.js';
import type { EtcdFence } from '../log/etcd-log-keys.js';
import { EtcdLogKeys } from '../log/etcd-log-keys.js';
import { DEFAULT_LEASE_TTL_SECONDS } from '../etcd/etcd-connection.js';

export interface EtcdLeadershipOptions {
  client: Etcd3;
  prefix: string;
  /** Stable server ID (unique in the cluster). */
  id: string;
  name: string;
  /** This server's advertised HTTP "host:port"; advertise() can change it later. */
  address: string;
  leaseTtlSeconds?: number;
  logger?: pino.Logger;
  /** Called once by close() (the owner of the shared client closes it when all users are done). */
  onClose?: () => void;
}

/** What the leader and member keys hold. */
interface MemberValue {
  id: string;
  name: string;
  address: string;
}

/** How often the lease's age and a missing leader are checked (ms). */
const CHECK_MS = 200;
/** How often a new session is attempted while etcd cannot grant a lease (ms). */
const SESSION_RETRY_MS = 1000;

export class EtcdLeadership implements Leadership {
  private readonly client: Etcd3;
  private readonly keys: EtcdLogKeys;
  private readonly ttlMs: number;
  private readonly log: pino.Logger | undefined;
  private readonly self: MemberValue;
  private readonly onClose: (() => void) | undefined;
  private closed = false;
  private started = false;
  private lease: Lease | null = null;
  private leaseId: string | null = null;
  private lastKeepAlive = 0;
  private fenceValue: EtcdFence | null = null;
  private leaderValue: (MemberValue & { createRevision: string }) | null = null;
  private lastLeaderContact = 0;
  private readonly known = new Map<string, { value: MemberValue; alive: boolean }>();
  private readonly listeners = new Set<(leader: boolean) => void>();
  private watchers: Watcher[] = [];
  private timer: NodeJS.Timeout | null = null;
  private campaigning = false;
  private sessionStarting = false;
  /** When the last session was attempted: while etcd is away, one attempt a second. */
  private lastSessionAttempt = 0;

  constructor(o: EtcdLeadershipOptions) {
    this.client = o.client;
    this.keys = new EtcdLogKeys(o.prefix);
    this.ttlMs = (o.leaseTtlSeconds ?? DEFAULT_LEASE_TTL_SECONDS) * 1000;
    this.log = o.logger;
    this.self = { id: o.id, name: o.name, address: o.address };
    this.onClose = o.onClose;
  }

  /** The fence for the log backend: set only while this server holds leadership. */
  fence(): EtcdFence | null {
    return this.isLeader() ? this.fenceValue : null;
  }

  /** Updates the advertised address: the registration, and the leader key while leading (same create revision). */
  advertise(address: string): void {
    if (address === this.self.address) return;
    this.self.address = address;
    if (!this.lease || this.closed) return;
    void this.register().catch(() => undefined);
    const fence = this.fenceValue;
    if (fence && this.leaseId) {
      void this.client
        .if(fence.key, 'Create', '==', fence.createRevision)
        .then(this.client.put(fence.key).value(JSON.stringify(this.self)).lease(this.leaseId))
        .commit()
        .catch(() => undefined);
    }
  }

  async start(): Promise<void> {
    if (this.started) return;
    this.started = true;
    await this.watchCluster();
    await this.newSession();
    this.timer = setInterval(() => this.tick(), CHECK_MS);
  }

  isLeader(): boolean {
    // A keep-alive older than the TTL means the lease may be gone: not leader, even before tick().
    return this.fenceValue !== null && Date.now() - this.lastKeepAlive < this.ttlMs;
  }

  leaderAddress(): string | null {
    if (this.isLeader()) return this.self.address;
    return this.leaderValue?.address ?? null;
  }

  lastContactMs(): number {
    if (this.isLeader()) return 0;
    if (!this.leaderValue || this.lastLeaderContact === 0) return 0;
    return Math.max(0, Date.now() - this.lastLeaderContact);
  }

  onChange(listener: (leader: boolean) => void): () => void {
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  }

  members(): ServerMember[] {
    const leaderId = this.isLeader() ? this.self.id : this.leaderValue?.id;
    return [...this.known.values()]
      .map(({ value, alive }) => ({
        id: value.id,
        name: value.name,
        address: value.address,
        leader: value.id === leaderId,
        status: alive ? ('alive' as const) : ('failed' as const),
      }))
      .sort((a, b) => a.name.localeCompare(b.name));
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    this.setLeader(null);
    await this.cancelWatchers();
    // Revoking the lease deletes the leader key and the registration: the next leader is elected at once.
    const lease = this.lease;
    this.lease = null;
    if (lease) await lease.revoke().catch(() => undefined);
    this.onClose?.();
  }

  // ---- sessions ----

  /** A new lease, registration and campaign (at start, and after the previous lease was lost). */
  private async newSession(): Promise<void> {
    if (this.closed || this.sessionStarting) return;
    this.sessionStarting = true;
    this.lastSessionAttempt = Date.now();
    try {
      const lease = this.client.lease(this.ttlMs / 1000);
      lease.on('lost', () => this.onLeaseLost(lease, 'lease lost'));
      lease.on('keepaliveSucceeded', () => {
        if (lease === this.lease) this.lastKeepAlive = Date.now();
      });
      const id = await lease.grant();
      if (this.closed) {
        await lease.revoke().catch(() => undefined);
        return;
      }
      this.lease = lease;
      this.leaseId = id;
      this.lastKeepAlive = Date.now();
      await this.register();
      await this.campaign();
    } catch (err) {
      // etcd unreachable: tick() tries again.
      this.log?.warn({ err }, 'etcd leadership: session not started');
      this.lease?.release();
      this.lease = null;
      this.leaseId = null;
    } finally {
      this.sessionStarting = false;
    }
  }

  private async register(): Promise<void> {
    if (!this.lease) return;
    await this.lease.put(this.keys.members + this.self.id).value(JSON.stringify(this.self));
  }

  /** Creates the leader key if it is absent; otherwise waits for the watch to see it deleted. */
  private async campaign(): Promise<void> {
    if (this.closed || this.campaigning || !this.leaseId || this.fenceValue) return;
    this.campaigning = true;
    try {
      const res = await this.client
        .if(this.keys.leader, 'Create', '==', 0)
        .then(this.client.put(this.keys.leader).value(JSON.stringify(this.self)).lease(this.leaseId))
        .else(this.client.get(this.keys.leader))
        .commit();
      if (res.succeeded) {
        // The put's revision is the key's create revision: the fence.
        this.setLeader({ key: this.keys.leader, createRevision: res.header.revision });
        this.noteLeader({ ...this.self, createRevision: res.header.revision });
      } else {
        const kv = res.responses[0]?.response_range.kvs[0];
        if (kv) this.noteLeader(parseLeader(kv));
      }
    } finally {
      this.campaigning = false;
    }
  }

  private onLeaseLost(lease: Lease, why: string): void {
    if (lease !== this.lease || this.closed) return;
    this.log?.warn({ why }, 'etcd leadership: lease lost; stepping down and starting a new session');
    this.lease = null;
    this.leaseId = null;
    this.setLeader(null);
    lease.release();
    // Best effort: if etcd still has the old lease (it was unreachable, not expired), drop it so
    // the leader key goes now rather than at expiry.
    void lease.revoke().catch(() => undefined);
    void this.newSession();
  }

  /** Steps down when the lease is older than its TTL; starts a session or campaign when due. */
  private tick(): void {
    if (this.closed) return;
    if (this.lease && Date.now() - this.lastKeepAlive >= this.ttlMs) {
      this.onLeaseLost(this.lease, `no keep-alive for ${Date.now() - this.lastKeepAlive} ms`);
      return;
    }
    if (!this.lease) {
      if (Date.now() - this.lastSessionAttempt >= SESSION_RETRY_MS) void this.newSession();
      return;
    }
    if (!this.leaderValue && !this.fenceValue) void this.campaign().catch(() => undefined);
    if (this.leaderValue && this.lastKeepAlive > this.lastLeaderContact) this.lastLeaderContact = this.lastKeepAlive;
  }

  private setLeader(fence: EtcdFence | null): void {
    const was = this.fenceValue !== null;
    this.fenceValue = fence;
    const now = fence !== null;
    if (was === now) return;
    this.log?.info({ id: this.self.id }, now ? 'etcd leadership: became leader' : 'etcd leadership: lost leadership');
    for (const l of [...this.listeners]) {
      try {
        l(now);
      } catch (err) {
        this.log?.error({ err }, 'leadership listener failed');
      }
    }
  }

  // ---- the cluster as seen through etcd ----

  /**
   * Reads the leader and members, then watches both from the revision after the read. A watch
   * that etcd cancels (its start revision was compacted after a long disconnection) is replaced
   * by a fresh read and watch.
   */
  private async watchCluster(): Promise<void> {
    const [leader, members] = await Promise.all([this.client.get(this.keys.leader).exec(), this.client.getAll().prefix(this.keys.members).exec()]);
    const kv = leader.kvs[0];
    if (kv) this.noteLeader(parseLeader(kv));
    else if (this.leaderValue) this.onLeaderDeleted();
    for (const m of members.kvs) this.noteMember(m, true);
    const lw = await this.client.watch().key(this.keys.leader).startRevision(String(Number(leader.header.revision) + 1)).create();
    lw.on('put', (kv) => this.noteLeader(parseLeader(kv)));
    lw.on('delete', () => this.onLeaderDeleted());
    const mw = await this.client.watch().prefix(this.keys.members).startRevision(String(Number(members.header.revision) + 1)).create();
    mw.on('put', (kv) => this.noteMember(kv, true));
    mw.on('delete', (kv) => this.noteMember(kv, false));
    const watchers = [lw, mw];
    for (const w of watchers) w.on('error', (err) => this.rewatch(watchers, err));
    this.watchers = watchers;
    if (this.closed) await this.cancelWatchers();
  }

  private rewatch(failed: Watcher[], err: Error): void {
    if (this.closed || this.watchers !== failed) return;
    this.log?.warn({ err }, 'etcd leadership: watch canceled; reading the cluster again');
    void this.cancelWatchers();
    const retry = (): void => {
      if (this.closed) return;
      this.watchCluster().catch(() => setTimeout(retry, 500));
    };
    setTimeout(retry, 100);
  }

  private async cancelWatchers(): Promise<void> {
    const ws = this.watchers;
    this.watchers = [];
    for (const w of ws) await w.cancel().catch(() => undefined);
  }

  private noteLeader(value: MemberValue & { createRevision: string }): void {
    this.leaderValue = value;
    this.lastLeaderContact = Date.now();
    // Someone else's leader key: whatever this server believed, it is not the leader.
    if (this.fenceValue && value.createRevision !== this.fenceValue.createRevision) this.setLeader(null);
  }

  private onLeaderDeleted(): void {
    this.leaderValue = null;
    if (this.fenceValue) this.setLeader(null);
    void this.campaign().catch(() => undefined);
  }

  private noteMember(kv: IKeyValue, alive: boolean): void {
    const id = kv.key.toString().slice(this.keys.members.length);
    if (alive) {
      try {
        this.known.set(id, { value: JSON.parse(kv.value.toString()) as MemberValue, alive: true });
      } catch {
        // not a member value: ignore
      }
    } else {
      const m = this.known.get(id);
      if (m) m.alive = false;
    }
  }
}

function parseLeader(kv: IKeyValue): MemberValue & { createRevision: string } {
  let v: Partial<MemberValue> = {};
  try {
    v = JSON.parse(kv.value.toString()) as MemberValue;
  } catch {
    // an unreadable value still names a leader: its address is unknown
  }
  return { id: v.id ?? '', name: v.name ?? '', address: v.address ?? '', createRevision: kv.create_revision };
}
