import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { StateStore } from '../../src/server/state/state-store.js';
import { Fsm } from '../../src/server/fsm/fsm.js';
import { Table } from '../../src/server/state/state-reader.js';
import { FakeClock } from '../../src/time/clock.js';
import { mockNode } from '../mock/factories.js';
import { nodeCmd } from './fsm-helpers.js';

describe('StateStore waits on its clock', () => {
  it('times waitForChange and waitForIndex out on the injected clock, not wall time', async () => {
    const clock = new FakeClock();
    const store = new StateStore(clock);
    let changed: number | null = null;
    void store.waitForChange([Table.Nodes], 0, 1_000).then((i) => (changed = i));
    let reached: number | null = null;
    void store.waitForIndex(5, 2_000).then((i) => (reached = i));
    await new Promise((r) => setTimeout(r, 30));
    assert.equal(changed, null, 'timed out on wall time');
    await clock.advanceAsync(1_000);
    assert.equal(changed, 0);
    assert.equal(reached, null);
    new Fsm(store).apply(nodeCmd(mockNode()), 1);
    await clock.advanceAsync(999);
    assert.equal(reached, null);
    await clock.advanceAsync(1);
    assert.equal(reached, 1);
  });
});
