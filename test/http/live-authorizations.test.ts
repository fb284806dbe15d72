/**
 * The registry of live authorizations with a scripted token source and a fake clock: held
 * connections end when their token is deleted, expires or no longer passes their check; each
 * change re-resolves each secret once; failures to learn keep the connections; nothing runs
 * while nothing is held.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Acl } from '../../src/acl/acl.js';
import { LiveAuthorizations, type TokenWatchSource } from '../../src/http/acl/live-authorizations.js';
import { HttpError } from '../../src/http/http-errors.js';
import type { AclToken } from '../../src/structs/acl.js';
import type { CaravanError } from '../../src/structs/caravan-error.js';
import { FakeClock } from '../../src/time/clock.js';

function mockToken(secret: string, overrides: Partial<AclToken> = {}): AclToken {
  return {
    AccessorID: `acc-${secret}`,
    SecretID: secret,
    Name: secret,
    Type: 'client',
    Policies: ['p'],
    Roles: null,
    Global: false,
    Hash: '',
    CreateTime: '2023-01-01T00:00:00Z',
    ExpirationTime: null,
    ExpirationTTL: 0,
    CreateIndex: 1,
    ModifyIndex: 1,
    ...overrides,
  };
}

/** A source whose tokens and permissions the test edits, announcing each edit with change(). */
class ScriptedSource implements TokenWatchSource {
  readonly tokens = new Map<string, AclToken>();
  acl = Acl.management;
  failWith: Error | undefined;
  resolves = 0;
  waiting = 0;
  private wake: (() => void) | undefined;
  private index = 0;

  resolve(secret: string): Promise<{ token: AclToken; acl: Acl }> {
    this.resolves++;
    if (this.failWith) return Promise.reject(this.failWith);
    const token = this.tokens.get(secret);
    if (!token) return Promise.reject(new HttpError('ACL_TOKEN_NOT_FOUND', {}));
    return Promise.resolve({ token, acl: this.acl });
  }

  cursor(): number {
    return this.index;
  }

  next(cursor: number, signal: AbortSignal): Promise<number> {
    if (this.index > cursor) return Promise.resolve(this.index);
    this.waiting++;
    return new Promise((resolve) => {
      const done = (): void => {
        this.waiting--;
        this.wake = undefined;
        resolve(this.index);
      };
      this.wake = done;
      signal.addEventListener('abort', done, { once: true });
    });
  }

  exists(secret: string): boolean {
    return this.tokens.has(secret);
  }

  change(): void {
    this.index++;
    this.wake?.();
  }
}

/** Lets the registry's promise chains run. */
async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise<void>((r) => setImmediate(r));
}

function setup() {
  const source = new ScriptedSource();
  const clock = new FakeClock();
  const live = new LiveAuthorizations(source, clock);
  const revoked: { name: string; code: string }[] = [];
  const hold = (name: string, token: AclToken, stillAllows?: (acl: Acl) => boolean) =>
    live.hold({ secret: token.SecretID, token, revoke: (r: CaravanError) => revoked.push({ name, code: r.code }), ...(stillAllows ? { stillAllows } : {}) });
  return { source, clock, live, revoked, hold };
}

test('a deleted token ends every connection held with it, and only those; each secret is resolved once per change', async () => {
  const { source, live, revoked, hold } = setup();
  const a = mockToken('a');
  const b = mockToken('b');
  source.tokens.set('a', a);
  source.tokens.set('b', b);
  hold('exec-a', a);
  hold('events-a', a);
  hold('logs-b', b);
  await settle();
  source.tokens.delete('a');
  source.resolves = 0;
  source.change();
  await settle();
  assert.deepEqual(revoked, [
    { name: 'exec-a', code: 'ACL_TOKEN_NOT_FOUND' },
    { name: 'events-a', code: 'ACL_TOKEN_NOT_FOUND' },
  ]);
  assert.equal(source.resolves, 2, 'one resolution per distinct secret, not per connection');
  assert.equal(live.size(), 1);
  live.close();
});

test('a policy change ends the connections whose check no longer passes', async () => {
  const { source, live, revoked, hold } = setup();
  const t = mockToken('t');
  source.tokens.set('t', t);
  let allowed = true;
  hold('exec', t, () => allowed);
  hold('unchecked', t);
  await settle();
  source.change();
  await settle();
  assert.deepEqual(revoked, [], 'still allowed: kept');
  allowed = false;
  source.change();
  await settle();
  assert.deepEqual(revoked, [{ name: 'exec', code: 'ACL_PERMISSION_DENIED' }]);
  live.close();
});

test('a token ends its connections when it expires, with no change announced', async () => {
  const { source, clock, live, revoked, hold } = setup();
  const t = mockToken('t', { ExpirationTime: new Date(clock.now() + 2000).toISOString() });
  const forever = mockToken('forever');
  source.tokens.set('t', t);
  source.tokens.set('forever', forever);
  const grant = hold('events', t);
  hold('other', forever);
  await clock.advanceAsync(1999);
  assert.deepEqual(revoked, []);
  assert.equal(grant.check(), true);
  await clock.advanceAsync(1);
  assert.deepEqual(revoked, [{ name: 'events', code: 'ACL_TOKEN_EXPIRED' }]);
  assert.equal(grant.check(), false);
  assert.equal(live.size(), 1);
  live.close();
});

test('check() sees a deletion the agent can tell without I/O, before any change is processed', () => {
  const { source, live, revoked, hold } = setup();
  const t = mockToken('t');
  source.tokens.set('t', t);
  const grant = hold('exec', t);
  source.tokens.delete('t');
  assert.equal(grant.check(), false);
  assert.deepEqual(revoked, [{ name: 'exec', code: 'ACL_TOKEN_NOT_FOUND' }]);
  assert.equal(grant.check(), false, 'revoked once, stays revoked');
  assert.equal(revoked.length, 1);
  live.close();
});

test('a token already gone or expired when held is refused, and nothing is held', () => {
  const { clock, live, revoked, hold, source } = setup();
  assert.throws(() => hold('exec', mockToken('gone')), (err: CaravanError) => err.code === 'ACL_TOKEN_NOT_FOUND');
  const expired = mockToken('expired', { ExpirationTime: new Date(clock.now() - 1).toISOString() });
  source.tokens.set('expired', expired);
  assert.throws(() => hold('events', expired), (err: CaravanError) => err.code === 'ACL_TOKEN_EXPIRED');
  assert.deepEqual(revoked, [], 'refused, not revoked');
  assert.equal(live.size(), 0);
  live.close();
});

test('a failure to learn (no server answers) keeps the connections', async () => {
  const { source, live, revoked, hold } = setup();
  const t = mockToken('t');
  source.tokens.set('t', t);
  hold('exec', t);
  await settle();
  source.failWith = new HttpError('HTTP_INTERNAL', { reason: 'no server answered' });
  source.change();
  await settle();
  assert.deepEqual(revoked, []);
  assert.equal(live.size(), 1);
  live.close();
});

test('nothing runs while nothing is held, and watching resumes with the next hold', async () => {
  const { source, clock, live, revoked, hold } = setup();
  const t = mockToken('t', { ExpirationTime: new Date(clock.now() + 60_000).toISOString() });
  source.tokens.set('t', t);
  const grant = hold('exec', t);
  await settle();
  assert.equal(source.waiting, 1);
  assert.equal(clock.pendingTimers(), 1, 'the expiry timer');
  grant.release();
  await settle();
  assert.equal(source.waiting, 0, 'the watch ended');
  assert.equal(clock.pendingTimers(), 0, 'the expiry timer is cancelled');
  hold('again', t);
  await settle();
  assert.equal(source.waiting, 1);
  source.tokens.delete('t');
  source.change();
  await settle();
  assert.deepEqual(revoked, [{ name: 'again', code: 'ACL_TOKEN_NOT_FOUND' }]);
  live.close();
});
