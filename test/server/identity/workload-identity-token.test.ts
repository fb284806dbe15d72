/**
 * Workload identity tokens minted and verified (pure: time is an argument), and the keyring as
 * the FSM keeps it: a fresh token verifies with Nomad's claims under any key of the keyring; it
 * expires at its TTL (never without one); a rotated key is inactive and still verifies; every
 * tampering is refused with its reason; the first-key command keeps one key when two race; a
 * removed key is gone and the active one is never removed.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac, generateKeyPairSync } from 'node:crypto';
import { FakeClock } from '../../../src/time/clock.js';
import { mintWorkloadToken, publicJwk, verifyWorkloadToken, WorkloadTokenError, WorkloadTokenProblem, type MintWorkloadInput } from '../../../src/server/identity/workload-identity-token.js';
import type { RootKey } from '../../../src/structs/root-key.js';
import { rootKeyMeta } from '../../../src/structs/root-key.js';
import { StateStore } from '../../../src/server/state/state-store.js';
import { Fsm } from '../../../src/server/fsm/fsm.js';

function rootKey(id: string): RootKey {
  const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048, publicKeyEncoding: { type: 'spki', format: 'pem' }, privateKeyEncoding: { type: 'pkcs8', format: 'pem' } });
  return { KeyID: id, Algorithm: 'RS256', State: 'active', CreateTime: 0, CreateIndex: 0, ModifyIndex: 0, PublicKey: publicKey, PrivateKey: privateKey };
}

const k1 = rootKey('k1');
const k2 = rootKey('k2');
const ring = (...keys: RootKey[]) => (kid: string) => keys.find((k) => k.KeyID === kid);

function input(clock: FakeClock, over: Partial<MintWorkloadInput> = {}): MintWorkloadInput {
  return { region: 'global', namespace: 'default', jobId: 'web', group: 'g', allocId: 'a1', task: 't', identity: 'default', audience: ['nomadproject.io'], ttlMs: 60_000, nowMs: clock.now(), tokenId: 'j1', issuer: '', ...over };
}

const refusedWith = (problem: WorkloadTokenProblem) => (err: unknown) => err instanceof WorkloadTokenError && err.problem === problem && err.code === 'WORKLOAD_IDENTITY_INVALID';

function withPart(token: string, index: 0 | 1, edit: (o: Record<string, unknown>) => Record<string, unknown>): string {
  const parts = token.split('.');
  parts[index] = Buffer.from(JSON.stringify(edit(JSON.parse(Buffer.from(parts[index]!, 'base64url').toString()) as Record<string, unknown>))).toString('base64url');
  return parts.join('.');
}

describe('workload identity tokens', () => {
  it('verify with Nomad\'s claims and expire at their TTL', () => {
    const clock = new FakeClock();
    const { jwt } = mintWorkloadToken(k1, input(clock));
    const c = verifyWorkloadToken(ring(k1), jwt, clock.now());
    assert.equal(c.sub, 'global:default:web:g:t:default');
    assert.deepEqual([c.nomad_namespace, c.nomad_job_id, c.nomad_allocation_id, c.nomad_task, c.aud], ['default', 'web', 'a1', 't', 'nomadproject.io']);
    assert.equal(c.exp! - c.iat, 60);
    clock.advance(60_000);
    assert.throws(() => verifyWorkloadToken(ring(k1), jwt, clock.now()), refusedWith(WorkloadTokenProblem.Expired));
  });

  it('without a TTL never expire; a second key of the ring verifies what it signed', () => {
    const clock = new FakeClock();
    const { jwt, claims } = mintWorkloadToken(k2, input(clock, { ttlMs: 0 }));
    assert.equal(claims.exp, undefined);
    clock.advance(365 * 24 * 3600_000);
    assert.equal(verifyWorkloadToken(ring(k1, k2), jwt, clock.now()).nomad_task, 't');
    assert.throws(() => verifyWorkloadToken(ring(k1), jwt, clock.now()), refusedWith(WorkloadTokenProblem.UnknownKey));
  });

  it('refuse tampering: claims, alg none, HS256 with the public key, a kid swapped to another key, a future nbf', () => {
    const clock = new FakeClock();
    const { jwt } = mintWorkloadToken(k1, input(clock));
    const keys = ring(k1, k2);
    assert.throws(() => verifyWorkloadToken(keys, withPart(jwt, 1, (c) => ({ ...c, nomad_namespace: 'other' })), clock.now()), refusedWith(WorkloadTokenProblem.Signature));
    assert.throws(() => verifyWorkloadToken(keys, withPart(jwt, 0, (h) => ({ ...h, alg: 'none' })), clock.now()), refusedWith(WorkloadTokenProblem.Algorithm));
    assert.throws(() => verifyWorkloadToken(keys, `${jwt.split('.').slice(0, 2).join('.')}.`, clock.now()), refusedWith(WorkloadTokenProblem.Malformed));
    const hsInput = `${Buffer.from(JSON.stringify({ alg: 'HS256', kid: 'k1' })).toString('base64url')}.${jwt.split('.')[1]}`;
    const hs = `${hsInput}.${createHmac('sha256', k1.PublicKey).update(hsInput).digest('base64url')}`;
    assert.throws(() => verifyWorkloadToken(keys, hs, clock.now()), refusedWith(WorkloadTokenProblem.Algorithm));
    assert.throws(() => verifyWorkloadToken(keys, withPart(jwt, 0, (h) => ({ ...h, kid: 'k2' })), clock.now()), refusedWith(WorkloadTokenProblem.Signature));
    const early = mintWorkloadToken(k1, input(clock, { nowMs: clock.now() + 3600_000 })).jwt;
    assert.throws(() => verifyWorkloadToken(keys, early, clock.now()), refusedWith(WorkloadTokenProblem.NotYetValid));
  });

  it('publish only the public half as a JWK, and key metadata without key material', () => {
    const jwk = publicJwk(k1);
    assert.deepEqual(Object.keys(jwk).sort(), ['alg', 'e', 'kid', 'kty', 'n', 'use']);
    assert.deepEqual([jwk.kty, jwk.alg, jwk.use, jwk.kid], ['RSA', 'RS256', 'sig', 'k1']);
    assert.doesNotMatch(JSON.stringify(rootKeyMeta(k1)), /KEY-----/);
  });
});

describe('the keyring in the FSM', () => {
  it('keeps one first key when two race, rotates to a new active key, removes only inactive keys', () => {
    const state = new StateStore();
    const fsm = new Fsm(state);
    fsm.apply({ Type: 'RootKeyUpsert', Key: k1, OnlyIfNoneActive: true, Now: 1 }, 1);
    fsm.apply({ Type: 'RootKeyUpsert', Key: k2, OnlyIfNoneActive: true, Now: 2 }, 2);
    assert.deepEqual(state.acl.allRootKeys().map((k) => [k.KeyID, k.State]), [['k1', 'active']]);
    fsm.apply({ Type: 'RootKeyUpsert', Key: k2, Now: 3 }, 3);
    assert.deepEqual(state.acl.allRootKeys().map((k) => [k.KeyID, k.State, k.ModifyIndex]), [['k2', 'active', 3], ['k1', 'inactive', 3]]);
    fsm.apply({ Type: 'RootKeyDelete', KeyID: 'k2' }, 4);
    assert.equal(state.acl.activeRootKey()?.KeyID, 'k2');
    fsm.apply({ Type: 'RootKeyDelete', KeyID: 'k1' }, 5);
    assert.deepEqual(state.acl.allRootKeys().map((k) => k.KeyID), ['k2']);
    // Snapshots keep the keyring.
    const restored = new StateStore();
    restored.acl.restore(state.acl.serialize());
    assert.equal(restored.acl.activeRootKey()?.PrivateKey, k2.PrivateKey);
  });
});
