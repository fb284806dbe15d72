import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { VariableLockTimers } from '../../../src/server/leader/variable-lock-timers.js';
import { FakeClock } from '../../../src/time/clock.js';

function timers() {
  const clock = new FakeClock();
  const expired: string[] = [];
  const t = new VariableLockTimers({ clock, expire: async (ns, path, id) => void expired.push(`${ns}/${path}/${id}`), onError: () => {} });
  return { clock, expired, t };
}

describe('VariableLockTimers', () => {
  it('expires a lock after its TTL, then holds its delay', () => {
    const { clock, expired, t } = timers();
    t.arm('default', 'a', { ID: 'L1', TTL: '10s', LockDelay: '5s' });
    clock.advance(9_999);
    assert.deepEqual(expired, []);
    clock.advance(1);
    assert.deepEqual(expired, ['default/a/L1']);
    assert.equal(t.inDelay('default', 'a'), true);
    clock.advance(4_999);
    assert.equal(t.inDelay('default', 'a'), true);
    clock.advance(1);
    assert.equal(t.inDelay('default', 'a'), false);
  });

  it('restarts the TTL on renewal and forgets it on release (no delay)', () => {
    const { clock, expired, t } = timers();
    t.arm('default', 'a', { ID: 'L1', TTL: '10s', LockDelay: '5s' });
    clock.advance(8_000);
    t.arm('default', 'a', { ID: 'L1', TTL: '10s', LockDelay: '5s' });
    clock.advance(8_000);
    assert.deepEqual(expired, []);
    t.cancel('default', 'a');
    clock.advance(60_000);
    assert.deepEqual(expired, []);
    assert.equal(t.inDelay('default', 'a'), false);
  });

  it('is correct for a TTL longer than Node.js timers allow, and for locks restored on leadership', () => {
    const { clock, expired, t } = timers();
    const day = 24 * 3600 * 1000;
    t.start([
      { Namespace: 'default', Path: 'long', Lock: { ID: 'L2', TTL: '720h', LockDelay: '0s' } },
      { Namespace: 'default', Path: 'free' },
    ]);
    clock.advance(29 * day);
    assert.deepEqual(expired, []);
    clock.advance(day);
    assert.deepEqual(expired, ['default/long/L2']);
    assert.equal(t.inDelay('default', 'long'), false, 'a zero delay');
  });

  it('fires nothing after stop (leadership lost)', () => {
    const { clock, expired, t } = timers();
    t.arm('default', 'a', { ID: 'L1', TTL: '1s', LockDelay: '1s' });
    t.stop();
    clock.advance(10_000);
    assert.deepEqual(expired, []);
  });
});
