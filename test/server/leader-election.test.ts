/**
 * The etcd election's state machine (LeaderElection), driven deterministically against a fake
 * etcd: revisions, leases that expire on logical time, a history its fake watches deliver.
 *
 *   - issue 33's wedge: a watch re-created after an etcd restart delivers an old delete (and the
 *     history before it) after a server won; the winner stays the leader and nobody follows a
 *     ghost;
 *   - a server that finds a key carrying its own lease is the leader;
 *   - liveness: a lost lease or a deleted own key gets a new lease and a new campaign;
 *   - no leader is named while the view is untrusted or the lease unconfirmed past its TTL;
 *   - a seeded simulation of three servers through etcd outages, lost and replayed watches and
 *     paused servers: never two leaders at once, and a leader within TTL + 1 s once quiet.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { LeaderElection, type ElectionAction, type ElectionChange, type ElectionEvent, type ElectionKey } from '../../src/server/leadership/leader-election.js';

const PREFIX = '/c/election/';
const TTL = 2000;
const RETRY = 500;

/** An etcd holding the election prefix: revisions, leases with expiry, and the history of changes. */
class FakeEtcd {
  revision = 0n;
  up = true;
  private nextLease = 100;
  readonly keys = new Map<string, ElectionKey>();
  readonly leases = new Map<string, number>();
  readonly history: { revision: bigint; change: ElectionChange }[] = [];

  grant(now: number): string {
    const id = String(this.nextLease++);
    this.leases.set(id, now + TTL);
    return id;
  }

  keepAlive(id: string, now: number): boolean {
    if (!this.leases.has(id)) return false;
    this.leases.set(id, now + TTL);
    return true;
  }

  /** Creates `key` with `lease` unless it exists; its create revision, or null (no such lease). */
  campaign(lease: string, key: string): bigint | null {
    if (!this.leases.has(lease)) return null;
    const known = this.keys.get(key);
    if (known) return known.lease === lease ? known.createRevision : null;
    this.revision++;
    const kv: ElectionKey = { key, createRevision: this.revision, modRevision: this.revision, lease, value: JSON.stringify({ lease }) };
    this.keys.set(key, kv);
    this.history.push({ revision: this.revision, change: { kind: 'put', kv } });
    return this.revision;
  }

  revoke(id: string): void {
    if (!this.leases.delete(id)) return;
    for (const [key, kv] of this.keys) {
      if (kv.lease !== id) continue;
      this.revision++;
      this.keys.delete(key);
      this.history.push({ revision: this.revision, change: { kind: 'delete', key, modRevision: this.revision } });
    }
  }

  expire(now: number): void {
    if (!this.up) return;
    for (const [id, at] of [...this.leases]) if (at <= now) this.revoke(id);
  }

  /** etcd restarts: every lease is renewed for a TTL from now (etcd's lessor does this on promotion). */
  restart(now: number): void {
    this.up = true;
    for (const id of this.leases.keys()) this.leases.set(id, now + TTL);
  }

  read(): { revision: bigint; keys: ElectionKey[] } {
    return { revision: this.revision, keys: [...this.keys.values()] };
  }

  changesAfter(revision: bigint): ElectionChange[] {
    return this.history.filter((h) => h.revision > revision).map((h) => h.change);
  }
}

function newElection(): LeaderElection {
  return new LeaderElection({ prefix: PREFIX, leaseTtlMs: TTL, retryMs: RETRY });
}

describe('leader election (etcd recipe)', () => {
  it('a stale delete from a re-created watch after a win does not depose the winner (issue 33)', () => {
    const etcd = new FakeEtcd();
    // s1 led; then etcd restarted and s1 died: its lease expired and its key was deleted.
    const l1 = etcd.grant(0);
    etcd.campaign(l1, PREFIX + l1);
    etcd.revoke(l1);

    const s2 = newElection();
    let now = 1000;
    assert.deepEqual(s2.step({ type: 'tick' }, now), [{ do: 'resync' }, { do: 'grant-lease' }]);
    const l2 = etcd.grant(now);
    const campaign = s2.step({ type: 'lease-granted', leaseId: l2, sentAt: now }, now);
    assert.deepEqual(campaign, [{ do: 'campaign', leaseId: l2, key: PREFIX + l2 }]);
    const created = etcd.campaign(l2, PREFIX + l2)!;
    s2.step({ type: 'campaigned', leaseId: l2, createRevision: created }, now);
    s2.step({ type: 'synced', ...etcd.read() }, now);
    const won = s2.leader(now);
    assert.equal(won.kind, 'self');
    assert.equal(won.kind === 'self' && won.key.createRevision, created);

    // The watch is re-created from an old start revision and replays everything: s1's key put,
    // its delete (before s2's key was created), and s2's own put again. Also a delete of s2's own
    // key name older than the key's create revision, as a single leader key would have had.
    now += 100;
    const replay: ElectionChange[] = [...etcd.changesAfter(0n), { kind: 'delete', key: PREFIX + l2, modRevision: created - 1n }];
    assert.deepEqual(s2.step({ type: 'changes', changes: replay }, now), [], 'nothing to do: no new campaign, no revoke');
    const after = s2.leader(now);
    assert.equal(after.kind, 'self', 's2 still leads');
    assert.equal(after.kind === 'self' && after.key.createRevision, created, 'with the same fence');

    // A follower that saw the same replay follows s2, not the dead s1.
    const s3 = newElection();
    s3.step({ type: 'tick' }, now);
    const l3 = etcd.grant(now);
    s3.step({ type: 'lease-granted', leaseId: l3, sentAt: now }, now);
    s3.step({ type: 'campaigned', leaseId: l3, createRevision: etcd.campaign(l3, PREFIX + l3)! }, now);
    s3.step({ type: 'synced', ...etcd.read() }, now);
    s3.step({ type: 'changes', changes: etcd.changesAfter(0n) }, now);
    const seen = s3.leader(now);
    assert.equal(seen.kind === 'other' && seen.key.lease, l2);
  });

  it('a server that finds a key with its own lease (campaign found it existing) is the leader', () => {
    const etcd = new FakeEtcd();
    const e = newElection();
    const now = 0;
    e.step({ type: 'tick' }, now);
    const lease = etcd.grant(now);
    e.step({ type: 'lease-granted', leaseId: lease, sentAt: now }, now);
    // The campaign's put landed but its answer was lost; the retry finds the key already there.
    const created = etcd.campaign(lease, PREFIX + lease)!;
    e.step({ type: 'campaign-failed', leaseId: lease }, now);
    assert.deepEqual(e.step({ type: 'tick' }, now + RETRY), [{ do: 'campaign', leaseId: lease, key: PREFIX + lease }]);
    assert.equal(etcd.campaign(lease, PREFIX + lease), created);
    e.step({ type: 'campaigned', leaseId: lease, createRevision: created }, now + RETRY);
    e.step({ type: 'synced', ...etcd.read() }, now + RETRY);
    assert.equal(e.leader(now + RETRY).kind, 'self');
  });

  it('liveness: the next candidate leads when the leader’s key goes; a server whose key or lease is gone starts over', () => {
    const etcd = new FakeEtcd();
    const a = newElection();
    const b = newElection();
    let now = 0;
    const la = etcd.grant(now);
    const lb = etcd.grant(now);
    for (const [e, l] of [[a, la], [b, lb]] as const) {
      e.step({ type: 'tick' }, now);
      e.step({ type: 'lease-granted', leaseId: l, sentAt: now }, now);
      e.step({ type: 'campaigned', leaseId: l, createRevision: etcd.campaign(l, PREFIX + l)! }, now);
    }
    for (const e of [a, b]) e.step({ type: 'synced', ...etcd.read() }, now);
    assert.equal(a.leader(now).kind, 'self');
    assert.equal(b.leader(now).kind, 'other');

    // a's lease is revoked behind its back (as after a pause past the TTL): both see the delete.
    const seen = etcd.revision;
    etcd.revoke(la);
    now += 100;
    b.step({ type: 'keepalive', leaseId: lb, sentAt: now }, now);
    b.step({ type: 'changes', changes: etcd.changesAfter(seen) }, now);
    assert.equal(b.leader(now).kind, 'self', 'b, next in line, leads');
    // a finds its own key gone from a view past the key's creation: it drops the lease and starts over.
    assert.deepEqual(a.step({ type: 'changes', changes: etcd.changesAfter(seen) }, now), [{ do: 'revoke-lease', leaseId: la }, { do: 'grant-lease' }]);
    assert.equal(a.leader(now).kind, 'unknown');
    const la2 = etcd.grant(now);
    assert.deepEqual(a.step({ type: 'lease-granted', leaseId: la2, sentAt: now }, now), [{ do: 'campaign', leaseId: la2, key: PREFIX + la2 }]);
    const seen2 = etcd.revision;
    a.step({ type: 'campaigned', leaseId: la2, createRevision: etcd.campaign(la2, PREFIX + la2)! }, now);
    a.step({ type: 'changes', changes: etcd.changesAfter(seen2) }, now);
    const l = a.leader(now);
    assert.equal(l.kind === 'other' && l.key.lease, lb, 'a follows b, queued behind it');

    // etcd says b's lease is gone (a keep-alive answered TTL 0): b starts over the same way.
    assert.deepEqual(b.step({ type: 'lease-lost', leaseId: lb }, now), [{ do: 'revoke-lease', leaseId: lb }, { do: 'grant-lease' }]);
    assert.equal(b.leader(now).kind, 'unknown');
  });

  it('a lost watch keeps the leader leading and its followers naming nobody; a follower never leads on an untrusted view', () => {
    const etcd = new FakeEtcd();
    const a = newElection();
    const b = newElection();
    const now = 0;
    const la = etcd.grant(now);
    const lb = etcd.grant(now);
    for (const [e, l] of [[a, la], [b, lb]] as const) {
      e.step({ type: 'tick' }, now);
      e.step({ type: 'lease-granted', leaseId: l, sentAt: now }, now);
      e.step({ type: 'campaigned', leaseId: l, createRevision: etcd.campaign(l, PREFIX + l)! }, now);
    }
    for (const e of [a, b]) e.step({ type: 'synced', ...etcd.read() }, now);
    // Both watches end (the etcd member their streams ran on was killed).
    a.step({ type: 'watch-lost' }, now + 10);
    b.step({ type: 'watch-lost' }, now + 10);
    assert.equal(a.leader(now + 10).kind, 'self', 'the leader goes on');
    assert.equal(b.leader(now + 10).kind, 'unknown', 'a follower names nobody until it reads again');
    // a's lease goes while b cannot see it: b still does not lead until a read shows its key lowest.
    etcd.revoke(la);
    b.step({ type: 'keepalive', leaseId: lb, sentAt: now + 20 }, now + 20);
    assert.equal(b.leader(now + 20).kind, 'unknown');
    b.step({ type: 'synced', ...etcd.read() }, now + 30);
    assert.equal(b.leader(now + 30).kind, 'self');
  });

  it('names no leader while its view is untrusted or its lease unconfirmed for a TTL', () => {
    const etcd = new FakeEtcd();
    const e = newElection();
    let now = 0;
    e.step({ type: 'tick' }, now);
    const lease = etcd.grant(now);
    e.step({ type: 'lease-granted', leaseId: lease, sentAt: now }, now);
    e.step({ type: 'campaigned', leaseId: lease, createRevision: etcd.campaign(lease, PREFIX + lease)! }, now);
    e.step({ type: 'synced', ...etcd.read() }, now);
    assert.equal(e.leader(now).kind, 'self');
    // No keep-alive answered for a whole TTL (etcd unreachable, or this process paused).
    now = TTL;
    assert.equal(e.leader(now).kind, 'unknown');
    // Confirmed again (the keep-alive sent now): leads again with the same key.
    e.step({ type: 'keepalive', leaseId: lease, sentAt: now }, now);
    assert.equal(e.leader(now).kind, 'self');
    // The watch ended (e.g. the etcd member its stream ran on died): the prefix is read again,
    // and meanwhile this server leads on — its key was the lowest, and no later key is lower.
    assert.deepEqual(e.step({ type: 'watch-lost' }, now), [{ do: 'resync' }]);
    assert.equal(e.leader(now).kind, 'self');
    // …but only while its lease is confirmed.
    assert.equal(e.leader(now + TTL).kind, 'unknown');
    // A read that fails is retried after the delay, not at once.
    assert.deepEqual(e.step({ type: 'resync-failed' }, now), []);
    assert.deepEqual(e.step({ type: 'tick' }, now + RETRY), [{ do: 'resync' }]);
    e.step({ type: 'synced', ...etcd.read() }, now + RETRY);
    assert.equal(e.leader(now + RETRY).kind, 'self');
  });

  for (const seed of Array.from({ length: Number(process.env["SIM_SEEDS"] ?? 8) }, (_, i) => i + 1)) {
    it(`simulation (seed ${seed}): never two leaders; a leader within TTL + 1 s once faults stop`, () => simulate(seed));
  }
});

// ---- the simulation ----

/** A small deterministic random source (mulberry32). */
function rng(seed: number): () => number {
  let t = seed >>> 0;
  return () => {
    t = (t + 0x6d2b79f5) >>> 0;
    let r = Math.imul(t ^ (t >>> 15), 1 | t);
    r ^= r + Math.imul(r ^ (r >>> 7), 61 | r);
    return ((r ^ (r >>> 14)) >>> 0) / 4294967296;
  };
}

interface SimNode {
  election: LeaderElection;
  /** Events on their way to this node, with their arrival time. */
  inbox: { at: number; event: ElectionEvent }[];
  /** The revision its watch has delivered up to, or null without a watch. */
  watchedTo: bigint | null;
  pausedUntil: number;
  nextKeepAlive: number;
}

function simulate(seed: number): void {
  const random = rng(seed);
  const etcd = new FakeEtcd();
  const STEP = 10;
  const FAULTS_END = 40_000;
  const END = FAULTS_END + 5000 + TTL + 3000;
  const latency = (): number => 1 + Math.floor(random() * 40);
  const nodes: SimNode[] = [0, 1, 2].map(() => ({ election: newElection(), inbox: [], watchedTo: null, pausedUntil: 0, nextKeepAlive: 0 }));
  let etcdDownUntil = 0;

  // One ordered channel per node, as etcd's streams are: nothing overtakes what was sent before.
  const deliver = (n: SimNode, event: ElectionEvent, at: number): void => {
    const last = n.inbox[n.inbox.length - 1]?.at ?? 0;
    n.inbox.push({ at: Math.max(at, last), event });
  };

  const perform = (n: SimNode, a: ElectionAction, now: number): void => {
    const at = now + latency();
    switch (a.do) {
      case 'grant-lease':
        return deliver(n, etcd.up ? { type: 'lease-granted', leaseId: etcd.grant(now), sentAt: now } : { type: 'lease-grant-failed' }, at);
      case 'campaign': {
        const rev = etcd.up ? etcd.campaign(a.leaseId, a.key) : null;
        return deliver(n, rev === null ? { type: 'campaign-failed', leaseId: a.leaseId } : { type: 'campaigned', leaseId: a.leaseId, createRevision: rev }, at);
      }
      case 'revoke-lease':
        if (etcd.up) etcd.revoke(a.leaseId);
        return;
      case 'resync': {
        if (!etcd.up) return deliver(n, { type: 'resync-failed' }, at);
        const read = etcd.read();
        n.watchedTo = read.revision;
        return deliver(n, { type: 'synced', ...read }, at);
      }
    }
  };

  const run = (n: SimNode, event: ElectionEvent, now: number): void => {
    for (const a of n.election.step(event, now)) perform(n, a, now);
  };

  let lastLeaderless = 0;
  for (let now = 0; now <= END; now += STEP) {
    const faults = now < FAULTS_END;
    // ---- faults ----
    if (faults && etcd.up && random() < 0.002) {
      etcd.up = false;
      etcdDownUntil = now + 1000 + Math.floor(random() * 4000);
      for (const n of nodes) {
        if (n.watchedTo !== null) deliver(n, { type: 'watch-lost' }, now + latency());
        n.watchedTo = null;
      }
    }
    if (!etcd.up && now >= etcdDownUntil) etcd.restart(now);
    for (const n of nodes) {
      if (faults && now >= n.pausedUntil && random() < 0.0005) n.pausedUntil = Math.min(FAULTS_END, now + 500 + Math.floor(random() * 3500));
      if (faults && n.watchedTo !== null && random() < 0.002) {
        n.watchedTo = null;
        deliver(n, { type: 'watch-lost' }, now + latency());
      }
      // A replay of old history (a re-created watch from an old start revision).
      if (faults && random() < 0.003 && etcd.history.length > 0) {
        const upTo = etcd.history[Math.floor(random() * etcd.history.length)]!.revision;
        deliver(n, { type: 'changes', changes: etcd.history.filter((h) => h.revision <= upTo).map((h) => h.change) }, now + latency());
      }
    }
    etcd.expire(now);

    // ---- the nodes ----
    for (const n of nodes) {
      if (now < n.pausedUntil) continue; // a paused process handles nothing (its inbox waits)
      // Watch events, in order.
      if (n.watchedTo !== null && etcd.up) {
        const changes = etcd.changesAfter(n.watchedTo);
        if (changes.length > 0) {
          n.watchedTo = etcd.revision;
          deliver(n, { type: 'changes', changes }, now + latency());
        }
      }
      const due = n.inbox.filter((m) => m.at <= now);
      n.inbox = n.inbox.filter((m) => m.at > now);
      for (const m of due) run(n, m.event, now);
      const lease = n.election.leaseId();
      if (lease && now >= n.nextKeepAlive) {
        n.nextKeepAlive = now + TTL / 3;
        if (etcd.up) deliver(n, etcd.keepAlive(lease, now) ? { type: 'keepalive', leaseId: lease, sentAt: now } : { type: 'lease-lost', leaseId: lease }, now + latency());
      }
      run(n, { type: 'tick' }, now);
    }

    // ---- checks ----
    const leaders = nodes.filter((n) => n.election.leader(now).kind === 'self');
    assert.ok(leaders.length <= 1, `seed ${seed}: ${leaders.length} leaders at ${now} ms`);
    if (leaders.length === 0) lastLeaderless = now;
  }
  // Quiet from the end of the faults, or from etcd's return if it was down then.
  const quietFrom = Math.max(FAULTS_END, etcdDownUntil);
  assert.ok(lastLeaderless < quietFrom + TTL + 1000, `seed ${seed}: leaderless at ${lastLeaderless} ms, quiet from ${quietFrom} ms`);
}
