/**
 * What a client's runners keep per allocation (issue 30: 10,000 simulated nodes, 50,000
 * allocations, in one process). Each case is behaviour a real client has too: a hook call
 * makes no new AbortSignal (Node 20 keeps a weak reference per AbortSignal.any() in its sources
 * for good), an updated allocation's old version is let go, a copy of a task's state shares its
 * (never changed) events, allocations of one job version share one job object, and the
 * servers' copy of the task states is not kept.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { FakeClock } from '../../src/time/clock.js';
import { createMockDriver } from '../../src/drivers/index.js';
import { AllocRunner } from '../../src/client/allocrunner/alloc-runner.js';
import { TaskRunner } from '../../src/client/taskrunner/task-runner.js';
import { AllocDir } from '../../src/client/allocdir/alloc-dir.js';
import { MemoryStateDb } from '../../src/client/state/state-db.js';
import { Client, type ServerConnection } from '../../src/client/client.js';
import type { AnyTaskHook } from '../../src/client/taskrunner/interfaces.js';
import type { Allocation } from '../../src/structs/alloc.js';
import { mockAlloc, mockNode, mockTask } from '../mock/factories.js';
import { jobWith, silentLogger, tempDir, testNode, until } from './harness.js';
import { simulatedNode } from '../../bench/nodesim/simulated-node.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

test('task runner: every hook call gets the one stop signal, which aborts when the task is killed', async () => {
  const clock = new FakeClock();
  const driver = createMockDriver({ clock });
  const task = mockTask({ Config: { run_for: '1h' } });
  const alloc = mockAlloc(jobWith([task]), mockNode());
  const signals: AbortSignal[] = [];
  const capture: AnyTaskHook = {
    name: 'capture',
    prestart: async (req) => { signals.push(req.signal); return {}; },
    poststart: async (req) => { signals.push(req.signal); },
    update: async (req) => { signals.push(req.signal); },
    stop: async (req) => { signals.push(req.signal); },
  };
  const tr = new TaskRunner({
    alloc, task, allocDir: new AllocDir(tempDir(), alloc.ID, { onDisk: false }), driver, node: testNode, store: new MemoryStateDb(),
    clock, random: () => 0, logger: silentLogger, onStateChange: () => {}, hooks: [capture],
  });
  void tr.run();
  await until(clock, () => tr.state().State === 'running' && signals.length >= 2, 'the task running');
  tr.update({ ...alloc, AllocModifyIndex: alloc.AllocModifyIndex + 1 });
  await until(clock, () => signals.length >= 3, 'the update hook');
  assert.equal(signals[0]!.aborted, false);
  const killed = tr.kill();
  await until(clock, () => tr.state().State === 'dead', 'the task dead');
  await killed;
  // A copy of the state has its own list of events, but not copies of the events themselves
  // (the alloc runner keeps one such copy of every task's state).
  const [s1, s2] = [tr.state(), tr.state()];
  assert.notEqual(s1.Events, s2.Events);
  assert.ok(s1.Events.length > 0 && s1.Events.every((ev, i) => ev === s2.Events[i]));
  assert.equal(signals.length, 4, 'prestart, poststart, update, stop');
  for (const s of signals) assert.equal(s, signals[0], 'one signal for every hook call');
  assert.equal(signals[0]!.aborted, true);
});

test('alloc runner: once updated, the allocation it was created with can be collected', async () => {
  const clock = new FakeClock();
  const driver = createMockDriver({ clock });
  const job = jobWith([mockTask({ Config: { run_for: '1h' } })]);
  const node = mockNode();
  // Made in a function of its own so that no local of this test holds it.
  const make = (): { ar: AllocRunner; first: WeakRef<Allocation>; next: Allocation } => {
    const alloc = mockAlloc(job, node);
    const ar = new AllocRunner({
      alloc, dataDir: tempDir(), drivers: new Map([[driver.name, driver]]), node: testNode, store: new MemoryStateDb(),
      clock, random: () => 0, logger: silentLogger, onUpdate: () => {}, allocDirsOnDisk: false,
    });
    return { ar, first: new WeakRef(alloc), next: { ...alloc, AllocModifyIndex: alloc.AllocModifyIndex + 1, DesiredDescription: 'updated' } };
  };
  const { ar, first, next } = make();
  void ar.run();
  await until(clock, () => ar.clientUpdate().ClientStatus === 'running', 'the allocation running');
  ar.update(next);
  for (let i = 0; i < 5; i++) await clock.advanceAsync(0);
  assert.equal(ar.alloc(), next);
  await new Promise((r) => setImmediate(r));
  gc();
  assert.equal(first.deref(), undefined, 'the first version of the allocation is still held');
  const killed = ar.kill();
  await until(clock, () => ar.isDone(), 'the allocation stopped');
  await killed;
});

/** A server that registers the node and answers nothing else (the test hands allocations over itself). */
function idleServer(): ServerConnection {
  const hold = (signal: AbortSignal): Promise<never> => new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true }));
  return {
    registerNode: async () => ({ heartbeatTtlMs: 60_000 }),
    heartbeat: async () => ({ heartbeatTtlMs: 60_000 }),
    watchAllocs: (_n, _i, _t, signal) => hold(signal),
    fetchAllocs: async () => [],
    updateAllocs: async () => {},
    readTaskVariables: (_r, signal) => hold(signal),
    signTaskIdentities: async () => [],
    registerServices: async () => {},
    deregisterServices: async () => {},
    servers: () => ['127.0.0.1:4647'],
    setServers: () => {},
  };
}

test('client: allocations of one job version share one job object and drop the servers\' task states', async () => {
  const node = simulatedNode(0);
  const client = await Client.start({
    dataDir: tempDir(), connection: idleServer(), nodeName: node.name, httpAddr: node.httpAddr, identity: node.identity, host: node.host,
    drivers: [createMockDriver()], store: new MemoryStateDb(), allocDirsOnDisk: false, logger: silentLogger,
  });
  try {
    const job = jobWith([mockTask({ Config: { run_for: '1h' } })], { JobModifyIndex: 7 });
    const serverCopy = (i: number): Allocation => {
      const a = mockAlloc(job, mockNode({ ID: node.identity.id }), { ID: `0000000${i}-0000-4000-8000-000000000000`, Name: `web.web[${i}]` });
      a.TaskStates = { web: { State: 'running', Failed: false, Restarts: 0, LastRestart: null, StartedAt: null, FinishedAt: null, Events: [] } };
      // Each answer from the servers is parsed on its own: equal jobs, distinct objects.
      return JSON.parse(JSON.stringify(a)) as Allocation;
    };
    client.applyAllocs([serverCopy(1)]);
    client.applyAllocs([serverCopy(1), serverCopy(2)]);
    const [a, b] = client.allocRunners().map((ar) => ar.alloc());
    assert.ok(a && b);
    assert.equal(a.Job, b.Job, 'one job object for both allocations');
    assert.equal(a.TaskStates, null);
    assert.equal(b.TaskStates, null);
  } finally {
    await client.shutdown({ destroyAllocs: true });
  }
});
