import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CheckRestartTracker } from '../../src/client/serviceregistration/check-restart.js';
import { CheckStatus } from '../../src/client/serviceregistration/check-probe.js';

test('check_restart: failures in the grace do not count; limit consecutive failures restart; a success resets', () => {
  const t = new CheckRestartTracker(3, 1_000, 0);
  assert.equal(t.observe(CheckStatus.Failure, 500), false, 'in the grace');
  assert.equal(t.observe(CheckStatus.Failure, 1_000), false);
  assert.equal(t.observe(CheckStatus.Failure, 2_000), false);
  assert.equal(t.observe(CheckStatus.Success, 3_000), false);
  assert.equal(t.observe(CheckStatus.Failure, 4_000), false);
  assert.equal(t.observe(CheckStatus.Failure, 5_000), false);
  assert.equal(t.observe(CheckStatus.Failure, 6_000), true, 'the third consecutive failure');
  assert.equal(t.observe(CheckStatus.Failure, 6_500), false, 'a new grace after the restart');
  assert.equal(t.observe(CheckStatus.Pending, 9_000), false);
});

test('check_restart with limit 0 never restarts', () => {
  const t = new CheckRestartTracker(0, 0, 0);
  for (let i = 0; i < 10; i++) assert.equal(t.observe(CheckStatus.Failure, i * 1000), false);
});
