import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../src/time/clock.js';
import { AllocUpdateBatcher } from '../../src/client/alloc-update-batcher.js';
import type { AllocClientUpdate } from '../../src/server/server-api.js';

const upd = (ID: string, ClientStatus: AllocClientUpdate['ClientStatus']): AllocClientUpdate =>
  ({ ID, NodeID: 'n', ClientStatus, ClientDescription: '', TaskStates: {} });

test('batcher: first change goes out at once, later ones are coalesced per alloc into one request', async () => {
  const clock = new FakeClock();
  const sent: AllocClientUpdate[][] = [];
  const b = new AllocUpdateBatcher(async (u) => { sent.push(u); }, clock, 50);
  b.enqueue(upd('a', 'running'));
  await clock.advanceAsync(0);
  assert.equal(sent.length, 1);
  for (let i = 0; i < 1000; i++) b.enqueue(upd(`x${i % 10}`, 'pending'));
  b.enqueue(upd('a', 'complete'));
  await clock.advanceAsync(10);
  assert.equal(sent.length, 1, 'waits for the interval');
  await clock.advanceAsync(50);
  assert.equal(sent.length, 2);
  assert.equal(sent[1]!.length, 11);
  assert.equal(sent[1]!.find((u) => u.ID === 'a')!.ClientStatus, 'complete');
});

test('batcher: a failed send is retried, keeping newer updates', async () => {
  const clock = new FakeClock();
  let fail = true;
  const sent: AllocClientUpdate[][] = [];
  const b = new AllocUpdateBatcher(async (u) => { if (fail) throw new Error('down'); sent.push(u); }, clock, 50);
  b.enqueue(upd('a', 'running'));
  await clock.advanceAsync(0);
  fail = false;
  await clock.advanceAsync(1_000);
  assert.equal(sent.length, 1);
  assert.equal(sent[0]![0]!.ClientStatus, 'running');
});
