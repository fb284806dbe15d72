import { test } from 'node:test';
import assert from 'node:assert/strict';
import { taskActionCommand } from '../../src/client/task-action-command.js';
import { ClientApiError, ClientApiErrorCode } from '../../src/http/client-api-error.js';
import { mockTask } from '../mock/factories.js';

const task = mockTask({
  Name: 't',
  Actions: [
    { Name: 'greet', Command: '/bin/echo', Args: ['hi', 'there'] },
    { Name: 'bare', Command: '/bin/true', Args: null },
  ],
});
const alloc = { ID: 'a1', JobID: 'shop' };

test('taskActionCommand: the declared command line, args appended; none for a null Args', () => {
  assert.deepEqual(taskActionCommand(alloc, 'shop', task, 'greet'), ['/bin/echo', 'hi', 'there']);
  assert.deepEqual(taskActionCommand(alloc, 'shop', task, 'bare'), ['/bin/true']);
});

test('taskActionCommand refuses what is not the job\'s declared action', () => {
  const rows: { name: string; jobId: string; action: string; code: ClientApiErrorCode; message: RegExp }[] = [
    { name: 'unknown action, naming the known ones', jobId: 'shop', action: 'nope', code: ClientApiErrorCode.ActionNotFound, message: /action "nope" not found in task "t" \(the task's actions: greet, bare\)/ },
    { name: 'a path is not a name', jobId: 'shop', action: '../greet', code: ClientApiErrorCode.ActionNotFound, message: /not found/ },
    { name: 'an absolute command is not a name', jobId: 'shop', action: '/bin/echo', code: ClientApiErrorCode.ActionNotFound, message: /not found/ },
    { name: 'case matters', jobId: 'shop', action: 'GREET', code: ClientApiErrorCode.ActionNotFound, message: /not found/ },
    { name: 'another job\'s allocation', jobId: 'other', action: 'greet', code: ClientApiErrorCode.ActionJobMismatch, message: /allocation a1 is not an allocation of job "other"/ },
  ];
  for (const r of rows) {
    assert.throws(() => taskActionCommand(alloc, r.jobId, task, r.action), (err: unknown) => err instanceof ClientApiError && err.code === r.code && r.message.test(err.message), r.name);
  }
  assert.throws(() => taskActionCommand(alloc, 'shop', mockTask({ Name: 'x', Actions: null }), 'greet'), /\(the task has no actions\)/);
});
