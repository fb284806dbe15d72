import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../src/time/clock.js';
import { AllocUpdateBatcher } from '../../src/client/alloc-update-batcher.js';
import type { AllocClientUpdate } from '../../src/structs/alloc.js';

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
  b.enqueue(upd('a', 'running')); // no transition: 'a' was already reported running
  await clock.advanceAsync(10);
  assert.equal(sent.length, 1, 'waits for the interval');
  await clock.advanceAsync(50);
  assert.equal(sent.length, 2);
  assert.equal(sent[1]!.length, 11);
  assert.equal(sent[1]!.find((u) => u.ID === 'a')!.ClientStatus, 'running');
});

test('batcher: a transition to running or a terminal status goes out without waiting for the interval', async () => {
  const clock = new FakeClock();
  const sent: AllocClientUpdate[][] = [];
  const b = new AllocUpdateBatcher(async (u) => { sent.push(u); }, clock, 50);
  b.enqueue(upd('a', 'pending'));
  await clock.advanceAsync(0);
  assert.equal(sent.length, 1, 'first change at once');
  b.enqueue(upd('a', 'pending')); // event-only change: waits
  await clock.advanceAsync(5);
  assert.equal(sent.length, 1);
  b.enqueue(upd('a', 'running')); // pending → running: pulls the send in
  await clock.advanceAsync(0);
  assert.equal(sent.length, 2);
  assert.deepEqual(sent[1]!.map((u) => u.ClientStatus), ['running']);
  b.enqueue(upd('a', 'failed'));
  await clock.advanceAsync(0);
  assert.equal(sent.length, 3);
  assert.equal(sent[2]![0]!.ClientStatus, 'failed');
});

test('batcher: sends are never concurrent; what arrives during a send forms the next batch', async () => {
  const clock = new FakeClock();
  const sent: AllocClientUpdate[][] = [];
  let release!: () => void;
  let inFlight = 0;
  let maxInFlight = 0;
  const b = new AllocUpdateBatcher(async (u) => {
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    sent.push(u);
    await new Promise<void>((r) => (release = r));
    inFlight--;
  }, clock, 50);
  b.enqueue(upd('a', 'running'));
  await clock.advanceAsync(0);
  for (let i = 0; i < 100; i++) b.enqueue(upd(`x${i}`, 'running'));
  await clock.advanceAsync(0);
  assert.equal(sent.length, 1, 'the second batch waits for the first send');
  release();
  await clock.advanceAsync(0);
  assert.equal(sent.length, 2);
  assert.equal(sent[1]!.length, 100);
  release();
  await clock.advanceAsync(0);
  assert.equal(maxInFlight, 1);
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
