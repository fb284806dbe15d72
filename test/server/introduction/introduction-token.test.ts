/**
 * Introduction tokens minted and verified (pure: time is an argument, driven by a FakeClock):
 * a fresh token verifies with Nomad's claims; it expires at its TTL; any tampering — claims,
 * header, signature, `alg: none`, another cluster's key — is refused with its reason.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac, randomBytes } from 'node:crypto';
import { FakeClock } from '../../../src/time/clock.js';
import type { IntroductionSigningKey } from '../../../src/structs/client-introduction.js';
import {
  IntroductionTokenError,
  IntroductionTokenProblem,
  mintIntroductionToken,
  verifyIntroductionToken,
} from '../../../src/server/introduction/introduction-token.js';
import { looksLikeJwt } from '../../../src/server/jwt/jwt-parts.js';

const key = (id = 'k1'): IntroductionSigningKey => ({ KeyID: id, Key: randomBytes(32).toString('base64'), CreateIndex: 1 });

function mint(k: IntroductionSigningKey, clock: FakeClock, over: { nodeName?: string; nodePool?: string; ttlMs?: number } = {}): string {
  return mintIntroductionToken(k, { region: 'global', nodeName: over.nodeName ?? 'n1', nodePool: over.nodePool ?? 'default', ttlMs: over.ttlMs ?? 5 * 60_000, nowMs: clock.now(), tokenId: 'jti-1' });
}

function refusedWith(problem: IntroductionTokenProblem) {
  return (err: unknown) => err instanceof IntroductionTokenError && err.problem === problem && err.code === 'INTRODUCTION_TOKEN_INVALID';
}

/** Re-encodes one part of a token. */
function withPart(token: string, index: 0 | 1, edit: (o: Record<string, unknown>) => Record<string, unknown>): string {
  const parts = token.split('.');
  const o = JSON.parse(Buffer.from(parts[index]!, 'base64url').toString('utf8')) as Record<string, unknown>;
  parts[index] = Buffer.from(JSON.stringify(edit(o))).toString('base64url');
  return parts.join('.');
}

describe('introduction tokens', () => {
  it('verify with Nomad\'s claims, bound to the name and pool asked for', () => {
    const clock = new FakeClock();
    const k = key();
    const t = mint(k, clock, { nodeName: 'web-1', nodePool: 'platform', ttlMs: 15 * 60_000 });
    assert.ok(looksLikeJwt(t));
    const c = verifyIntroductionToken(k, t, clock.now());
    assert.equal(c.aud, 'nomadproject.io');
    assert.equal(c.nomad_node_name, 'web-1');
    assert.equal(c.nomad_node_pool, 'platform');
    assert.equal(c.sub, 'node-introduction:global:platform:web-1:default');
    assert.equal(c.exp - c.iat, 15 * 60);
    assert.equal(c.jti, 'jti-1');
    const header = JSON.parse(Buffer.from(t.split('.')[0]!, 'base64url').toString('utf8')) as Record<string, unknown>;
    assert.deepEqual(header, { alg: 'HS256', kid: 'k1', typ: 'JWT' });
  });

  it('expire at their TTL (FakeClock)', () => {
    const clock = new FakeClock();
    const k = key();
    const t = mint(k, clock, { ttlMs: 60_000 });
    clock.advance(59_000);
    assert.doesNotThrow(() => verifyIntroductionToken(k, t, clock.now()));
    clock.advance(1_000);
    assert.throws(() => verifyIntroductionToken(k, t, clock.now()), refusedWith(IntroductionTokenProblem.Expired));
    clock.advance(3_600_000);
    assert.throws(() => verifyIntroductionToken(k, t, clock.now()), refusedWith(IntroductionTokenProblem.Expired));
  });

  it('are not valid before they were issued (beyond a minute of clock skew)', () => {
    const clock = new FakeClock();
    const k = key();
    const t = mint(k, clock);
    assert.doesNotThrow(() => verifyIntroductionToken(k, t, clock.now() - 30_000));
    assert.throws(() => verifyIntroductionToken(k, t, clock.now() - 120_000), refusedWith(IntroductionTokenProblem.NotYetValid));
  });

  const tampered: { name: string; edit: (t: string, k: IntroductionSigningKey) => string; problem: IntroductionTokenProblem }[] = [
    { name: 'another node name in the claims', edit: (t) => withPart(t, 1, (c) => ({ ...c, nomad_node_name: 'rogue' })), problem: IntroductionTokenProblem.Signature },
    { name: 'another pool in the claims', edit: (t) => withPart(t, 1, (c) => ({ ...c, nomad_node_pool: 'prod' })), problem: IntroductionTokenProblem.Signature },
    { name: 'a later expiry', edit: (t) => withPart(t, 1, (c) => ({ ...c, exp: (c['exp'] as number) + 86_400 })), problem: IntroductionTokenProblem.Signature },
    { name: 'a flipped signature byte', edit: (t) => { const p = t.split('.'); const s = Buffer.from(p[2]!, 'base64url'); s[0] = s[0]! ^ 1; return `${p[0]}.${p[1]}.${s.toString('base64url')}`; }, problem: IntroductionTokenProblem.Signature },
    { name: 'a truncated signature', edit: (t) => t.slice(0, -4), problem: IntroductionTokenProblem.Signature },
    { name: 'alg none', edit: (t) => withPart(t, 0, (h) => ({ ...h, alg: 'none' })), problem: IntroductionTokenProblem.Algorithm },
    { name: 'alg RS256', edit: (t) => withPart(t, 0, (h) => ({ ...h, alg: 'RS256' })), problem: IntroductionTokenProblem.Algorithm },
    { name: 'another key ID', edit: (t) => withPart(t, 0, (h) => ({ ...h, kid: 'k2' })), problem: IntroductionTokenProblem.UnknownKey },
    { name: 'signed by another cluster\'s key of the same ID', edit: (_t, k) => mint({ ...key(k.KeyID) }, new FakeClock()), problem: IntroductionTokenProblem.Signature },
    { name: 'two parts only', edit: (t) => t.split('.').slice(0, 2).join('.'), problem: IntroductionTokenProblem.Malformed },
    { name: 'a node SecretID', edit: () => '99999999-8888-7777-6666-555555555555', problem: IntroductionTokenProblem.Malformed },
    { name: 'a header that is not JSON', edit: (t) => `${Buffer.from('not json').toString('base64url')}.${t.split('.').slice(1).join('.')}`, problem: IntroductionTokenProblem.Malformed },
  ];
  for (const row of tampered) {
    it(`refuse a token with ${row.name}`, () => {
      const clock = new FakeClock();
      const k = key();
      const t = row.edit(mint(k, clock), k);
      assert.throws(() => verifyIntroductionToken(k, t, clock.now()), refusedWith(row.problem));
    });
  }

  it('refuse every token while the cluster has no key', () => {
    const clock = new FakeClock();
    assert.throws(() => verifyIntroductionToken(undefined, mint(key(), clock), clock.now()), refusedWith(IntroductionTokenProblem.UnknownKey));
  });

  it('refuse a validly signed JWT that is not an introduction token', () => {
    const clock = new FakeClock();
    const k = key();
    // Re-sign a token whose subject is not an introduction's: the signature holds, the claims do not.
    const header = Buffer.from(JSON.stringify({ alg: 'HS256', kid: 'k1', typ: 'JWT' })).toString('base64url');
    const claims = Buffer.from(JSON.stringify({ aud: 'nomadproject.io', exp: clock.now() / 1000 + 60, iat: 0, nbf: 0, jti: 'x', sub: 'node:global:n1', nomad_node_pool: 'default', nomad_node_name: '' })).toString('base64url');
    const sig = createHmac('sha256', Buffer.from(k.Key, 'base64')).update(`${header}.${claims}`).digest().toString('base64url');
    assert.throws(() => verifyIntroductionToken(k, `${header}.${claims}.${sig}`, clock.now()), refusedWith(IntroductionTokenProblem.NotIntroduction));
  });

  it('never carry the token in their error message', () => {
    const clock = new FakeClock();
    const k = key();
    const t = mint(k, clock, { ttlMs: 1000 });
    try {
      verifyIntroductionToken(k, t, clock.now() + 10_000);
      assert.fail('should have thrown');
    } catch (err) {
      assert.ok(!(err as Error).message.includes(t.split('.')[2]!));
      assert.equal((err as Error).message, 'introduction token has expired');
    }
  });
});
