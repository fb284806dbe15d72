/**
 * Leadership on etcd: the I/O around the LeaderElection state machine (leader-election.ts,
 * which holds every decision). This class grants the leases (a LeaseKeeper keeps them alive:
 * on a worker thread for a server, see worker-lease-keeper.ts), puts the candidate key, reads
 * the election prefix and watches it (EtcdWatch, one stream each), feeds each result back as an
 * event with the time, and tells listeners when leadership changes. Before every decision about
 * who leads it reads the keeper's newest confirmation of its lease, so a leader whose thread was
 * busy past the TTL while the keeper kept confirming it does not step down.
 *
 * Each server also registers `<prefix>members/<id>` with its lease (the member list; a
 * registration gone with its lease shows the server as failed, until force-leave removes it).
 * Leadership is handed over by resigning (leader-election.ts): see transfer in
 * http/routes/operator-raft-peers.ts.
 *
 * Nothing the etcd client does may end the process: every callback from it is guarded, every
 * watch runs on its own stream whose failures end that watch only (then the prefix is read
 * again), and a failed call becomes a retry event.
 */
import type { Etcd3, IKeyValue } from 'etcd3';
import { EtcdLeaseInvalidError } from 'etcd3';
import type pino from 'pino';
import type { Leadership, ServerMember } from './leadership.js';
import type { EtcdFence } from '../log/etcd-log-keys.js';
import { EtcdLogKeys } from '../log/etcd-log-keys.js';
import { DEFAULT_LEASE_TTL_SECONDS } from '../etcd/etcd-connection.js';
import { EtcdWatch, type WatchEvent } from '../etcd/etcd-watch.js';
import { monotonicMs } from '../etcd/monotonic-ms.js';
import { InlineLeaseKeeper, type LeaseKeeper } from '../etcd/lease-keeper.js';
import { LeaderElection, type ElectionAction, type ElectionChange, type ElectionEvent, type ElectionKey, type ElectionLeader } from './leader-election.js';

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
  /** Opens a watch (tests substitute one whose stream they drive). Default EtcdWatch.open. */
  openWatch?: typeof EtcdWatch.open;
  /**
   * Keeps the leases alive (closed by close()). Default: on this thread over `client`; servers
   * get a WorkerLeaseKeeper (etcd-replication.ts).
   */
  leaseKeeper?: LeaseKeeper;
}

/** What the candidate and member keys hold; `left` marks a member removed by force-leave. */
interface MemberValue {
  id: string;
  name: string;
  address: string;
  left?: boolean;
}

/** How often time-based rules (lease confirmation, retries) are evaluated (ms). */
const TICK_MS = 100;
/** Delay before a failed grant, campaign or read of the prefix is tried again (ms). */
const RETRY_MS = 500;
/** How long start() waits for a leader to be known before returning leaderless (ms, beyond the TTL). */
const START_WAIT_EXTRA_MS = 3000;
/** Delay between attempts to revoke an abandoned lease (ms). */
const REVOKE_RETRY_MS = 250;

export class EtcdLeadership implements Leadership {
  private readonly client: Etcd3;
  private readonly keys: EtcdLogKeys;
  private readonly ttlMs: number;
  private readonly log: pino.Logger | undefined;
  private readonly self: MemberValue;
  private readonly onClose: (() => void) | undefined;
  private readonly openWatch: typeof EtcdWatch.open;
  private readonly election: LeaderElection;
  private closed = false;
  private started = false;
  private readonly keeper: LeaseKeeper;
  /** The leases granted and not yet revoked. */
  private readonly leases = new Set<string>();
  private registered: string | null = null;
  private registering = false;
  /** Bumped by every read of the prefix: events of older watches are dropped. */
  private generation = 0;
  private watches: EtcdWatch[] = [];
  /** Election events of the current watch that arrived before its read was applied. */
  private pending: ElectionChange[] | null = null;
  private readonly known = new Map<string, { value: MemberValue; alive: boolean }>();
  private membersRevision = 0n;
  private wasLeader = false;
  /** The leader's key last told to the log (a follower's view of failovers, for tracing). */
  private toldLeader: string | null = null;
  private warnedTtl = false;
  private readonly listeners = new Set<(leader: boolean) => void>();
  private timer: NodeJS.Timeout | null = null;

  constructor(o: EtcdLeadershipOptions) {
    this.client = o.client;
    this.keys = new EtcdLogKeys(o.prefix);
    this.ttlMs = (o.leaseTtlSeconds ?? DEFAULT_LEASE_TTL_SECONDS) * 1000;
    this.log = o.logger;
    this.self = { id: o.id, name: o.name, address: o.address };
    this.onClose = o.onClose;
    this.openWatch = o.openWatch ?? ((client, opts) => EtcdWatch.open(client, opts));
    this.election = new LeaderElection({ prefix: this.keys.election, leaseTtlMs: this.ttlMs, retryMs: RETRY_MS });
    this.keeper = o.leaseKeeper ?? new InlineLeaseKeeper(this.client, this.ttlMs);
  }

  /** The fence for the log backend: this server's candidate key while it is the leader. */
  fence(): EtcdFence | null {
    const l = this.leader();
    return l.kind === 'self' ? { key: l.key.key, createRevision: String(l.key.createRevision) } : null;
  }

  /**
   * Starts campaigning. Resolves once a leader is known (this server or another), or after the
   * lease TTL plus a few seconds without one (etcd unreachable): the server then runs leaderless
   * and keeps trying.
   */
  async start(): Promise<void> {
    if (this.started) return;
    this.started = true;
    void this.keeper.open();
    this.timer = setInterval(() => this.step({ type: 'tick' }), TICK_MS);
    this.step({ type: 'tick' });
    const deadline = monotonicMs() + this.ttlMs + START_WAIT_EXTRA_MS;
    while (!this.closed && this.leader().kind === 'unknown' && monotonicMs() < deadline) {
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  isLeader(): boolean {
    return !this.closed && this.leader().kind === 'self';
  }

  leaderAddress(): string | null {
    const l = this.leader();
    if (l.kind === 'self') return this.self.address || null;
    if (l.kind === 'other') return parseMember(l.key.value)?.address || null;
    return null;
  }

  term(): string | null {
    const l = this.leader();
    return l.kind === 'self' || l.kind === 'other' ? String(l.key.createRevision) : null;
  }

  lastContactMs(): number {
    if (this.isLeader()) return 0;
    const at = this.election.confirmedAt();
    return at === null ? 0 : Math.max(0, monotonicMs() - at);
  }

  onChange(listener: (leader: boolean) => void): () => void {
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  }

  /** Updates the advertised address: the registration, and the candidate key (same create revision). */
  advertise(address: string): void {
    if (address === this.self.address) return;
    this.self.address = address;
    if (this.closed) return;
    this.registered = null;
    this.register();
    const leaseId = this.election.leaseId();
    const own = this.election.candidates().find((k) => k.lease === leaseId);
    if (leaseId && own) {
      void this.client
        .if(own.key, 'Create', '==', String(own.createRevision))
        .then(this.client.put(own.key).value(JSON.stringify(this.self)).lease(leaseId))
        .commit()
        .catch(() => undefined);
    }
  }

  members(): ServerMember[] {
    const l = this.leader();
    const leaderId = l.kind === 'self' ? this.self.id : l.kind === 'other' ? parseMember(l.key.value)?.id : undefined;
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

  candidateOrder(): string[] {
    return this.election.candidates().map((k) => parseMember(k.value)?.id ?? '').filter((id) => id !== '');
  }

  resign(): void {
    this.log?.info({ id: this.self.id }, 'etcd leadership: resigning');
    this.step({ type: 'resign' });
  }

  /**
   * Removes failed server `id` from every server's member list: a "left" value put under its
   * member key (without a lease) is seen by every watcher, then deleted, so a later read finds
   * nothing. A live server (its registration present) is not touched.
   */
  async forget(id: string): Promise<boolean> {
    const m = this.known.get(id);
    if (!m || m.alive) return false;
    const key = this.keys.members + id;
    const res = await this.client
      .if(key, 'Create', '==', 0)
      .then(this.client.put(key).value(JSON.stringify({ ...m.value, left: true })))
      .commit();
    if (!res.succeeded) return false; // it registered again meanwhile: alive
    await this.client.delete().key(key).exec();
    this.known.delete(id);
    return true;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    const leaseId = this.election.leaseId();
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    this.election.step({ type: 'close' }, monotonicMs());
    this.publish();
    this.dropWatches();
    // Revoking the lease deletes the candidate key and the registration: the next leader is elected at once.
    for (const id of this.leases) {
      this.keeper.release(id);
      if (id === leaseId) await this.client.leaseClient.leaseRevoke({ ID: id }).catch(() => undefined);
    }
    this.leases.clear();
    await this.keeper.close();
    this.onClose?.();
  }

  // ---- the state machine's loop ----

  /** Who leads now, with the keeper's newest confirmation of this server's lease applied first. */
  private leader(): ElectionLeader {
    const leaseId = this.election.leaseId();
    const at = leaseId ? this.keeper.confirmedAt(leaseId) : null;
    if (leaseId && at !== null) this.election.confirm(leaseId, at);
    return this.election.leader(monotonicMs());
  }

  /** Feeds `event` to the election, performs what it asks, and tells listeners of a change. */
  private step(event: ElectionEvent): void {
    if (this.closed) return;
    let actions: ElectionAction[];
    try {
      this.leader(); // applies the newest confirmation, which the election's rules read
      actions = this.election.step(event, monotonicMs());
    } catch (err) {
      this.log?.error({ err, event: event.type }, 'etcd leadership: election step failed');
      return;
    }
    for (const a of actions) this.perform(a);
    this.publish();
    if (this.registered !== this.election.leaseId()) this.register();
  }

  private perform(a: ElectionAction): void {
    switch (a.do) {
      case 'grant-lease':
        return void this.grant();
      case 'campaign':
        return void this.campaign(a.leaseId, a.key);
      case 'revoke-lease':
        return void this.revoke(a.leaseId);
      case 'resync':
        return void this.resync();
      default: {
        const never: never = a;
        throw new Error(`unknown election action ${JSON.stringify(never)}`);
      }
    }
  }

  private publish(): void {
    this.tellFollowed();
    const now = this.isLeader();
    if (now === this.wasLeader) return;
    this.wasLeader = now;
    const l = this.leader();
    this.log?.info({ id: this.self.id, ...(l.kind === 'self' ? { key: l.key.key, createRevision: String(l.key.createRevision) } : {}) }, now ? 'etcd leadership: became leader' : 'etcd leadership: lost leadership');
    for (const listener of [...this.listeners]) {
      try {
        listener(now);
      } catch (err) {
        this.log?.error({ err }, 'leadership listener failed');
      }
    }
  }

  /** Logs (info) each leader this server follows, once: when a follower learnt of a failover. */
  private tellFollowed(): void {
    const l = this.leader();
    if (l.kind !== 'other' || l.key.key === this.toldLeader) return;
    this.toldLeader = l.key.key;
    this.log?.info({ id: this.self.id, leader: parseMember(l.key.value)?.address ?? '', createRevision: String(l.key.createRevision) }, 'etcd leadership: following a leader');
  }

  // ---- leases ----

  private async grant(): Promise<void> {
    await this.keeper.open();
    if (this.closed) return;
    const sentAt = monotonicMs();
    let id: string;
    try {
      const granted = await this.client.leaseClient.leaseGrant({ TTL: this.ttlMs / 1000 });
      id = String(granted.ID);
      this.noteGrantedTtl(Number(granted.TTL));
    } catch (err) {
      this.log?.warn({ err: describe(err) }, 'etcd leadership: no lease (etcd unreachable?); trying again');
      this.step({ type: 'lease-grant-failed' });
      return;
    }
    if (this.closed) {
      await this.client.leaseClient.leaseRevoke({ ID: id }).catch(() => undefined);
      return;
    }
    this.leases.add(id);
    this.keeper.keep(id, sentAt, (err) => {
      if (!this.leases.has(id)) return;
      this.log?.warn({ err: err.message, code: err.code, lease: id }, 'etcd leadership: lease lost');
      this.step({ type: 'lease-lost', leaseId: id });
    });
    this.step({ type: 'lease-granted', leaseId: id, sentAt });
  }

  /**
   * etcd raises a lease's TTL to its own minimum, ceil(1.5 × its election timeout): 2 s with
   * etcd's default 1 s election timeout. This server still leads only while its lease was
   * confirmed within the TTL it asked for (safe: it steps down earlier than etcd expires the
   * lease), but a dead leader is replaced only after etcd's TTL: said once, so an operator who
   * kept the 1 s default knows why failovers take longer (info, not a warning: the
   * default with etcd's defaults).
   */
  private noteGrantedTtl(ttlSeconds: number): void {
    if (this.warnedTtl || !(ttlSeconds * 1000 > this.ttlMs)) return;
    this.warnedTtl = true;
    this.log?.info(
      { asked: this.ttlMs / 1000, granted: ttlSeconds },
      'etcd leadership: etcd granted a longer lease TTL than lease_ttl (its minimum is 1.5 × its election timeout, rounded up): a dead leader is replaced only after the longer TTL',
    );
  }

  /**
   * Stops keeping `leaseId` alive and revokes it, retrying while etcd is away: etcd renews every
   * lease when it restarts, so an abandoned lease would otherwise keep its key — possibly the
   * lowest — for another TTL.
   */
  private async revoke(leaseId: string): Promise<void> {
    this.keeper.release(leaseId);
    this.leases.delete(leaseId);
    const deadline = monotonicMs() + 3 * this.ttlMs + 10_000;
    while (!this.closed && monotonicMs() < deadline) {
      try {
        await this.client.leaseClient.leaseRevoke({ ID: leaseId });
        return;
      } catch (err) {
        if (err instanceof EtcdLeaseInvalidError) return; // already gone
        await new Promise((r) => setTimeout(r, REVOKE_RETRY_MS));
      }
    }
  }

  /** Registers this server under its current lease (best effort: retried on the next step). */
  private register(): void {
    const leaseId = this.election.leaseId();
    if (!leaseId || !this.leases.has(leaseId) || this.registering || this.closed) return;
    this.registering = true;
    this.client
      .put(this.keys.members + this.self.id)
      .value(JSON.stringify(this.self))
      .lease(leaseId)
      .then(() => {
        this.registered = leaseId;
      })
      .catch(() => undefined)
      .finally(() => {
        this.registering = false;
      });
  }

  // ---- the campaign ----

  /** Creates this lease's candidate key unless it exists; either way learns its create revision. */
  private async campaign(leaseId: string, key: string): Promise<void> {
    try {
      const res = await this.client
        .if(key, 'Create', '==', 0)
        .then(this.client.put(key).value(JSON.stringify(this.self)).lease(leaseId))
        .else(this.client.get(key))
        .commit();
      if (res.succeeded) {
        this.step({ type: 'campaigned', leaseId, createRevision: BigInt(res.header.revision) });
        return;
      }
      const kv = res.responses[0]?.response_range?.kvs[0];
      if (kv && kv.lease === leaseId) {
        this.step({ type: 'campaigned', leaseId, createRevision: BigInt(kv.create_revision) });
        return;
      }
      throw new Error(`candidate key ${key} is held by lease ${kv?.lease ?? '?'}`);
    } catch (err) {
      this.log?.warn({ err: describe(err), lease: leaseId }, 'etcd leadership: campaign failed; trying again');
      this.step({ type: 'campaign-failed', leaseId });
    }
  }

  // ---- the view of the cluster ----

  /**
   * Reads the election prefix and the members, then watches both from the revision after each
   * read. Any watch ending makes the view untrusted (watch-lost) until the next read.
   */
  private async resync(): Promise<void> {
    this.dropWatches();
    const generation = ++this.generation;
    const current = (): boolean => generation === this.generation && !this.closed;
    // A resync superseded before it answers (its own watch ended while it read on, say, as etcd
    // went down) must still answer: the election waits for `synced` or `resync-failed` before it
    // asks for another, and a follower would otherwise never learn a leader again.
    const abandoned = (): void => {
      if (!this.closed) this.step({ type: 'resync-failed' });
    };
    this.pending = [];
    const lost = (err: Error): void => {
      if (!current()) return;
      this.log?.warn({ err: err.message }, 'etcd leadership: watch ended; reading the cluster again');
      this.dropWatches();
      this.step({ type: 'watch-lost' });
    };
    try {
      const election = await this.client.getAll().prefix(this.keys.election).exec();
      if (!current()) return abandoned();
      const electionRevision = BigInt(election.header.revision);
      const ew = await this.openWatch(this.client, {
        range: { prefix: this.keys.election },
        startRevision: String(electionRevision + 1n),
        onEvents: (events) => {
          if (!current()) return;
          const changes = events.map(toChange);
          if (this.pending) this.pending.push(...changes);
          else this.step({ type: 'changes', changes });
        },
        onEnd: lost,
      });
      this.watches.push(ew);
      if (!current()) {
        ew.cancel();
        return abandoned();
      }
      const members = await this.client.getAll().prefix(this.keys.members).exec();
      if (!current()) return abandoned();
      const membersRevision = BigInt(members.header.revision);
      const mw = await this.openWatch(this.client, {
        range: { prefix: this.keys.members },
        startRevision: String(membersRevision + 1n),
        onEvents: (events) => {
          if (current()) for (const e of events) this.noteMemberEvent(e);
        },
        onEnd: lost,
      });
      this.watches.push(mw);
      if (!current()) {
        mw.cancel();
        return abandoned();
      }
      this.noteMembers(members.kvs, membersRevision);
      const pending = this.pending ?? [];
      this.pending = null;
      this.step({ type: 'synced', revision: electionRevision, keys: election.kvs.map(toElectionKey) });
      if (pending.length > 0) this.step({ type: 'changes', changes: pending });
    } catch (err) {
      if (!current()) return abandoned();
      this.log?.warn({ err: describe(err) }, 'etcd leadership: reading the cluster failed; trying again');
      this.dropWatches();
      this.step({ type: 'resync-failed' });
    }
  }

  private dropWatches(): void {
    this.generation++;
    const ws = this.watches;
    this.watches = [];
    for (const w of ws) w.cancel();
  }

  private noteMembers(kvs: IKeyValue[], revision: bigint): void {
    const present = new Set<string>();
    for (const kv of kvs) {
      const id = kv.key.toString().slice(this.keys.members.length);
      const value = parseMember(kv.value.toString());
      if (!value || value.left) continue;
      present.add(id);
      this.known.set(id, { value, alive: true });
    }
    for (const [id, m] of this.known) if (!present.has(id)) m.alive = false;
    this.membersRevision = revision;
  }

  private noteMemberEvent(e: WatchEvent): void {
    const rev = BigInt(e.kv.mod_revision);
    if (rev <= this.membersRevision) return; // already reflected by the read
    this.membersRevision = rev;
    const id = e.kv.key.toString().slice(this.keys.members.length);
    if (e.kind === 'put') {
      const value = parseMember(e.kv.value.toString());
      if (value?.left) this.known.delete(id);
      else if (value) this.known.set(id, { value, alive: true });
    } else {
      const m = this.known.get(id);
      if (m) m.alive = false;
    }
  }
}

function toElectionKey(kv: IKeyValue): ElectionKey {
  return { key: kv.key.toString(), createRevision: BigInt(kv.create_revision), modRevision: BigInt(kv.mod_revision), lease: kv.lease, value: kv.value.toString() };
}

function toChange(e: WatchEvent): ElectionChange {
  return e.kind === 'put' ? { kind: 'put', kv: toElectionKey(e.kv) } : { kind: 'delete', key: e.kv.key.toString(), modRevision: BigInt(e.kv.mod_revision) };
}

function parseMember(text: string): MemberValue | null {
  try {
    const v = JSON.parse(text) as Partial<MemberValue>;
    return typeof v.id === 'string' ? { id: v.id, name: v.name ?? '', address: v.address ?? '', ...(v.left === true ? { left: true } : {}) } : null;
  } catch {
    return null;
  }
}

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
