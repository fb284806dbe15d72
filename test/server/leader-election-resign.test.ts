/**
 * Resigning (the step a leadership transfer is made of): the leader gives its lease up at once
 * — it names no leader until a view shows one — revokes it, and campaigns again with a new key
 * behind every existing one, so the next server in line leads and the resigner follows it.
 * Never two leaders: the resigner stops leading in the same step it resigns.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LeaderElection, type ElectionKey } from '../../src/server/leadership/leader-election.js';

const PREFIX = '/c/election/';
const TTL = 2000;

test('a resigning leader stops leading at once, revokes its lease and queues behind the next server, which leads', () => {
  let revision = 0n;
  const keys = new Map<string, ElectionKey>();
  const campaign = (lease: string): bigint => {
    revision++;
    keys.set(PREFIX + lease, { key: PREFIX + lease, createRevision: revision, modRevision: revision, lease, value: '{}' });
    return revision;
  };
  const read = () => ({ revision, keys: [...keys.values()] });
  const a = new LeaderElection({ prefix: PREFIX, leaseTtlMs: TTL, retryMs: 500 });
  const b = new LeaderElection({ prefix: PREFIX, leaseTtlMs: TTL, retryMs: 500 });
  let now = 0;
  for (const [e, lease] of [[a, '1'], [b, '2']] as const) {
    e.step({ type: 'tick' }, now);
    e.step({ type: 'lease-granted', leaseId: lease, sentAt: now }, now);
    e.step({ type: 'campaigned', leaseId: lease, createRevision: campaign(lease) }, now);
  }
  for (const e of [a, b]) e.step({ type: 'synced', ...read() }, now);
  assert.equal(a.leader(now).kind, 'self');
  assert.equal(b.leader(now).kind, 'other');

  now += 100;
  assert.deepEqual(a.step({ type: 'resign' }, now), [{ do: 'revoke-lease', leaseId: '1' }, { do: 'grant-lease' }]);
  assert.equal(a.leader(now).kind, 'unknown', 'no longer the leader, in the same step');
  assert.equal(a.leaseId(), null);

  // The revoke deletes a's key; b sees it and leads.
  revision++;
  keys.delete(PREFIX + '1');
  b.step({ type: 'keepalive', leaseId: '2', sentAt: now }, now);
  b.step({ type: 'changes', changes: [{ kind: 'delete', key: PREFIX + '1', modRevision: revision }] }, now);
  assert.equal(b.leader(now).kind, 'self');

  // a campaigns again with a new lease: its new key is behind b's, so it follows.
  a.step({ type: 'changes', changes: [{ kind: 'delete', key: PREFIX + '1', modRevision: revision }] }, now);
  assert.deepEqual(a.step({ type: 'lease-granted', leaseId: '3', sentAt: now }, now), [{ do: 'campaign', leaseId: '3', key: PREFIX + '3' }]);
  const created = campaign('3');
  a.step({ type: 'campaigned', leaseId: '3', createRevision: created }, now);
  a.step({ type: 'changes', changes: [{ kind: 'put', kv: keys.get(PREFIX + '3')! }] }, now);
  const seen = a.leader(now);
  assert.equal(seen.kind === 'other' && seen.key.lease, '2');
  assert.deepEqual(a.candidates().map((k) => k.lease), ['2', '3']);

  // Resigning without a lease changes nothing.
  const c = new LeaderElection({ prefix: PREFIX, leaseTtlMs: TTL, retryMs: 500 });
  assert.deepEqual(c.step({ type: 'resign' }, now).filter((x) => x.do === 'revoke-lease'), []);
});
