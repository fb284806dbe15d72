/**
 * The supervisor's time is a Clock: its idle exit is decided on a FakeClock here, in process,
 * without waiting real time (the daemon tests in supervisor.test.ts keep the real process).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Supervisor } from '../../src/drivers/supervisor/supervisor.js';
import { FakeClock } from '../../src/time/clock.js';

test('supervisor: exits after idleMs without tasks or agents, by its clock', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'cv-sup-clock-'));
  const clock = new FakeClock();
  const logs: string[] = [];
  const sup = new Supervisor({ dataDir, idleMs: 60_000, log: (m) => logs.push(m), clock });
  let exited = 0;
  sup.onIdleExit = () => exited++;
  try {
    await sup.listen();
    clock.advance(55_000);
    assert.equal(exited, 0, 'not idle long enough');
    clock.advance(5_000);
    assert.equal(exited, 1, 'idle for idleMs: exits');
    assert.ok(logs.some((l) => l.startsWith('idle:')));
  } finally {
    await sup.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
  assert.equal(clock.pendingTimers(), 0, 'close cancels the idle check');
});
