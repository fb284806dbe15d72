import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { drainAllocLines } from '../../src/cli/commands/node-drain.js';
import { mockAlloc, mockJob, mockNode } from '../mock/factories.js';

describe('node drain monitor lines', () => {
  it('reports marks, stops and status changes of the node allocations, nothing on the first look', () => {
    const job = mockJob();
    const node = mockNode();
    const a = mockAlloc(job, node);
    const seen = new Map();
    assert.deepEqual(drainAllocLines(seen, [a]), []);
    assert.deepEqual(drainAllocLines(seen, [{ ...a, DesiredTransition: { Migrate: true } }]), [`Alloc "${a.ID}" marked for migration`]);
    assert.deepEqual(drainAllocLines(seen, [{ ...a, DesiredTransition: { Migrate: true }, DesiredStatus: 'stop' }]), [`Alloc "${a.ID}" draining`]);
    assert.deepEqual(drainAllocLines(seen, [{ ...a, DesiredTransition: { Migrate: true }, DesiredStatus: 'stop', ClientStatus: 'complete' }]), [
      `Alloc "${a.ID}" status running -> complete`,
    ]);
  });
});
