import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { StateDb } from '../../src/client/state/state-db.js';
import { newTaskState } from '../../src/client/taskrunner/task-event.js';
import { mockAlloc, mockJob, mockNode } from '../mock/factories.js';
import { tempDir } from './harness.js';

test('state db: allocs, handles and task states survive a reopen; delete removes them', () => {
  const path = join(tempDir(), 'client', 'state.db');
  const db = new StateDb(path);
  const alloc = mockAlloc(mockJob(), mockNode());
  db.putAlloc(alloc);
  const handle = { taskId: `${alloc.ID}/web`, driver: 'raw_exec', config: {} as never, startedAt: 123, pid: 4242, state: { pgid: 4242 } };
  db.putTaskHandle(alloc.ID, 'web', handle);
  const st = { ...newTaskState(), State: 'running' as const, StartedAt: '2024-01-01T00:00:00.000Z' };
  db.putTaskState(alloc.ID, 'web', st);
  db.putMeta('k', 'v');
  db.close();

  const db2 = new StateDb(path);
  const all = db2.allAllocs();
  assert.equal(all.length, 1);
  assert.equal(all[0]!.alloc.ID, alloc.ID);
  assert.deepEqual(all[0]!.tasks.web!.handle, handle);
  assert.deepEqual(all[0]!.tasks.web!.state, st);
  assert.equal(db2.getMeta('k'), 'v');
  db2.putTaskHandle(alloc.ID, 'web', null);
  assert.equal(db2.allAllocs()[0]!.tasks.web!.handle, null);
  db2.deleteAlloc(alloc.ID);
  assert.equal(db2.allAllocs().length, 0);
  db2.close();
});

test('state db: commits are fsynced (WAL with synchronous FULL), so a power loss loses no returned write', () => {
  const db = new StateDb(join(tempDir(), 'client', 'state.db'));
  // SQLite's synchronous levels: 0 OFF, 1 NORMAL, 2 FULL, 3 EXTRA.
  assert.deepEqual(db.durability(), { journalMode: 'wal', synchronous: 2 });
  db.close();
});
