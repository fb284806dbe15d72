/**
 * The leader election on etcd as a pure state machine: events go in (reads and watch events
 * of the election prefix with their revisions, lease grants, keep-alives and losses, campaign
 * results, ticks), actions come out (grant a lease, campaign, revoke a lease, read the prefix
 * again); the caller (EtcdLeadership) performs them and feeds their results back. It reads no
 * clock and starts no timer: `now` comes with every step.
 *
 * The recipe is etcd's own election (clientv3/concurrency): every server with a lease puts its
 * own key `<election prefix><lease ID>` attached to that lease, once per lease. The leader is
 * the key with the lowest create revision under the prefix; its owner (the server whose lease
 * the key carries) leads, and the key's create revision is the fence its log writes compare
 * against. A key only disappears when its lease ends (expired or revoked), and a server only
 * leads once every key created before its own is gone, so two servers can never both own the
 * lowest key. Decisions rest on revisions and lease IDs, never on the order events happen to
 * arrive in:
 *
 *   - the view of the prefix is a read at revision R, then watch events after R applied in
 *     revision order; an event at or below the revision the view already reflects is ignored
 *     (a re-created watch replaying history, e.g. an old delete of a previous leader's key
 *     after a new one was created — issue 33);
 *   - a server that finds a key carrying its own lease knows it is its own, whoever wrote it;
 *   - leading also needs the lease confirmed by etcd within its TTL, counted from when the
 *     confirming keep-alive was sent (etcd's expiry is at least that late), so a paused or cut-off
 *     leader stops leading before its lease can have expired in etcd;
 *   - liveness: without a lease a server asks for one (again every RETRY_MS while etcd refuses);
 *     with a lease it campaigns (its key, once); when its key is gone from a view that is past
 *     the key's create revision, or etcd says the lease is gone, it drops that lease (revoking
 *     it, so its key goes at once) and starts over. A view that cannot be trusted (its watch
 *     ended) names no other server as leader until it is read again. So while etcd is
 *     reachable every live server has a key and the lowest one's owner leads; a key of a dead
 *     server goes within the lease TTL;
 *   - a server whose key was once the lowest in a trusted view keeps leading while its lease
 *     is confirmed, even while its view is being read again: no key created later can be lower,
 *     and lower ones only ever go. (A watch ends whenever the etcd member its stream ran on
 *     dies; one member of three killed must not cost the cluster its leader — CI, issue 33.)
 *
 *   no lease ──grant──▶ lease, no key ──campaign──▶ lease + key ──lowest & confirmed──▶ leader
 *       ▲                                               │
 *       └─ lease lost, own key gone, or resign (revoke) ◀┘
 */

/** A key under the election prefix, as a read or a put event shows it. */
export interface ElectionKey {
  key: string;
  createRevision: bigint;
  modRevision: bigint;
  /** The lease ID (decimal, as etcd's client gives it). */
  lease: string;
  /** The owner's member value (JSON). */
  value: string;
}

/** A change under the election prefix, as a watch delivers it. */
export type ElectionChange = { kind: 'put'; kv: ElectionKey } | { kind: 'delete'; key: string; modRevision: bigint };

export type ElectionEvent =
  /** Time passed: re-evaluates retries and the lease's confirmation. */
  | { type: 'tick' }
  | { type: 'lease-granted'; leaseId: string; sentAt: number }
  | { type: 'lease-grant-failed' }
  /** etcd confirmed the lease in answer to a keep-alive sent at `sentAt`. */
  | { type: 'keepalive'; leaseId: string; sentAt: number }
  /** etcd said the lease is gone, or the keep-alives gave up. */
  | { type: 'lease-lost'; leaseId: string }
  /** This lease's key exists (created now or found) with `createRevision`. */
  | { type: 'campaigned'; leaseId: string; createRevision: bigint }
  | { type: 'campaign-failed'; leaseId: string }
  /** A read of the whole prefix at `revision`; a watch from revision + 1 is open. */
  | { type: 'synced'; revision: bigint; keys: ElectionKey[] }
  | { type: 'resync-failed' }
  /** Events of the open watch, in revision order. */
  | { type: 'changes'; changes: ElectionChange[] }
  /** The watch ended: the view is no longer kept up to date. */
  | { type: 'watch-lost' }
  /**
   * Give up this lease (and so any leadership) and campaign again with a new one, whose key is
   * created after every key now in the prefix: the next-lowest key's owner leads (Nomad's
   * leadership transfer, done by every server ahead of the chosen one resigning).
   */
  | { type: 'resign' }
  | { type: 'close' };

export type ElectionAction =
  | { do: 'grant-lease' }
  | { do: 'campaign'; leaseId: string; key: string }
  /** Best effort: ends an abandoned lease now (its key with it) rather than at expiry. */
  | { do: 'revoke-lease'; leaseId: string }
  /** Read the prefix, open a watch after the read, answer with `synced` or `resync-failed`. */
  | { do: 'resync' };

/** Who leads, as this server can tell. */
export type ElectionLeader =
  | { kind: 'self'; key: ElectionKey }
  | { kind: 'other'; key: ElectionKey }
  /** No trustworthy view, etcd not confirmed reachable within the TTL, or no key at all. */
  | { kind: 'unknown' };

export interface LeaderElectionOptions {
  /** Where the candidates' keys live, e.g. "/caravan/election/". */
  prefix: string;
  leaseTtlMs: number;
  /** Delay before a failed grant, campaign or read is tried again. */
  retryMs: number;
}

type Campaign = { state: 'due'; at: number } | { state: 'in-flight' } | { state: 'done'; createRevision: bigint };

interface Session {
  leaseId: string;
  /** When the newest keep-alive etcd answered was sent: the lease lives at least TTL past it. */
  confirmedAt: number;
  campaign: Campaign;
  /** The session's key, once a trusted view showed it the lowest (see the file comment). */
  won: ElectionKey | null;
}

/** The election's state machine (see the file comment). */
export class LeaderElection {
  private closed = false;
  private session: Session | null = null;
  private granting = false;
  private nextGrantAt = 0;
  private synced = false;
  private resyncing = false;
  private nextResyncAt = 0;
  /** The revision the view reflects: every event up to it is in `keys`. */
  private revision = 0n;
  private readonly keys = new Map<string, ElectionKey>();

  constructor(private readonly o: LeaderElectionOptions) {}

  /** Applies `event` at time `now` and returns what the caller must do, in order. */
  step(event: ElectionEvent, now: number): ElectionAction[] {
    const actions: ElectionAction[] = [];
    this.apply(event, now, actions);
    if (!this.closed) this.decide(now, actions);
    return actions;
  }

  /** Who leads at `now` (see ElectionLeader). */
  leader(now: number): ElectionLeader {
    if (this.closed || !this.session || !this.confirmed(this.session, now)) return { kind: 'unknown' };
    if (!this.synced) return this.session.won ? { kind: 'self', key: this.session.won } : { kind: 'unknown' };
    const lowest = this.lowest();
    if (!lowest) return { kind: 'unknown' };
    return lowest.lease === this.session.leaseId ? { kind: 'self', key: lowest } : { kind: 'other', key: lowest };
  }

  private lowest(): ElectionKey | null {
    let lowest: ElectionKey | null = null;
    for (const k of this.keys.values()) if (!lowest || k.createRevision < lowest.createRevision) lowest = k;
    return lowest;
  }

  /** The lease this server campaigns with, if any. */
  leaseId(): string | null {
    return this.session?.leaseId ?? null;
  }

  /** When etcd last confirmed this server's lease (the keep-alive's send time), if it has one. */
  confirmedAt(): number | null {
    return this.session?.confirmedAt ?? null;
  }

  /**
   * etcd confirmed `leaseId` in answer to a keep-alive sent at `sentAt`: the 'keepalive' event
   * without a step (no actions), for a caller that reads confirmations from elsewhere (a lease
   * keeper's worker thread) just before it asks who leads.
   */
  confirm(leaseId: string, sentAt: number): void {
    if (this.session?.leaseId === leaseId && sentAt > this.session.confirmedAt) this.session.confirmedAt = sentAt;
  }

  /** The candidates' keys in the view, lowest create revision first. */
  candidates(): ElectionKey[] {
    return [...this.keys.values()].sort((a, b) => (a.createRevision < b.createRevision ? -1 : a.createRevision > b.createRevision ? 1 : 0));
  }

  /** The key a lease campaigns with. */
  keyOf(leaseId: string): string {
    return this.o.prefix + leaseId;
  }

  private confirmed(s: Session, now: number): boolean {
    return now - s.confirmedAt < this.o.leaseTtlMs;
  }

  private apply(event: ElectionEvent, now: number, actions: ElectionAction[]): void {
    switch (event.type) {
      case 'tick':
        return;
      case 'lease-granted':
        this.granting = false;
        if (this.closed || this.session) {
          actions.push({ do: 'revoke-lease', leaseId: event.leaseId });
          return;
        }
        this.session = { leaseId: event.leaseId, confirmedAt: event.sentAt, campaign: { state: 'due', at: now }, won: null };
        return;
      case 'lease-grant-failed':
        this.granting = false;
        this.nextGrantAt = now + this.o.retryMs;
        return;
      case 'keepalive':
        this.confirm(event.leaseId, event.sentAt);
        return;
      case 'lease-lost':
        if (this.session?.leaseId === event.leaseId) this.dropSession(actions, now);
        return;
      case 'campaigned':
        if (this.session?.leaseId === event.leaseId) this.session.campaign = { state: 'done', createRevision: event.createRevision };
        return;
      case 'campaign-failed':
        if (this.session?.leaseId === event.leaseId) this.session.campaign = { state: 'due', at: now + this.o.retryMs };
        return;
      case 'synced':
        this.resyncing = false;
        // etcd's revisions only grow: a read older than the view is from a superseded request.
        if (event.revision < this.revision) {
          this.nextResyncAt = now;
          return;
        }
        this.keys.clear();
        for (const k of event.keys) if (k.key.startsWith(this.o.prefix)) this.keys.set(k.key, k);
        this.revision = event.revision;
        this.synced = true;
        return;
      case 'resync-failed':
        this.resyncing = false;
        this.nextResyncAt = now + this.o.retryMs;
        return;
      case 'changes':
        if (this.synced) for (const c of event.changes) this.change(c);
        return;
      case 'watch-lost':
        this.synced = false;
        return;
      case 'resign':
        this.dropSession(actions, now);
        return;
      case 'close':
        this.closed = true;
        if (this.session) actions.push({ do: 'revoke-lease', leaseId: this.session.leaseId });
        this.session = null;
        return;
      default: {
        const never: never = event;
        throw new Error(`unknown election event ${JSON.stringify(never)}`);
      }
    }
  }

  /** Applies one watch event unless the view already reflects its revision (see the file comment). */
  private change(c: ElectionChange): void {
    const rev = c.kind === 'put' ? c.kv.modRevision : c.modRevision;
    if (rev <= this.revision) return;
    const key = c.kind === 'put' ? c.kv.key : c.key;
    const known = this.keys.get(key);
    // Belt and braces: nothing older than what the view holds for this key changes it.
    if (known && rev <= known.modRevision) return;
    this.revision = rev;
    if (!key.startsWith(this.o.prefix)) return;
    if (c.kind === 'put') this.keys.set(key, c.kv);
    else this.keys.delete(key);
  }

  /** The liveness rules: what to start now that the state is what it is. */
  private decide(now: number, actions: ElectionAction[]): void {
    const s = this.session;
    if (s && s.campaign.state === 'done' && this.synced && this.revision >= s.campaign.createRevision) {
      const own = [...this.keys.values()].some((k) => k.lease === s.leaseId);
      // Our key was created at or before what the view reflects, and is not in it: it was
      // deleted, so the lease is gone (expired or revoked). Start over with a new one.
      if (!own) this.dropSession(actions, now);
    }
    const won = this.session;
    if (won && !won.won && this.synced && this.confirmed(won, now)) {
      const lowest = this.lowest();
      if (lowest?.lease === won.leaseId) won.won = lowest;
    }
    if (!this.synced && !this.resyncing && now >= this.nextResyncAt) {
      this.resyncing = true;
      actions.push({ do: 'resync' });
    }
    if (!this.session && !this.granting && now >= this.nextGrantAt) {
      this.granting = true;
      actions.push({ do: 'grant-lease' });
    }
    const c = this.session?.campaign;
    if (this.session && c?.state === 'due' && now >= c.at) {
      this.session.campaign = { state: 'in-flight' };
      actions.push({ do: 'campaign', leaseId: this.session.leaseId, key: this.keyOf(this.session.leaseId) });
    }
  }

  private dropSession(actions: ElectionAction[], now: number): void {
    const s = this.session;
    if (!s) return;
    this.session = null;
    this.nextGrantAt = now;
    actions.push({ do: 'revoke-lease', leaseId: s.leaseId });
  }
}
