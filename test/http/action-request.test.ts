import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseActionRequest } from '../../src/http/exec/action-request.js';

test('parseActionRequest reads action, allocID, task and tty; a command parameter is not part of it', () => {
  const r = parseActionRequest('shop', { action: 'greet', allocID: 'a1', task: 't', tty: 'true', command: '["/bin/sh"]' });
  assert.deepEqual(r, { jobId: 'shop', action: 'greet', allocId: 'a1', task: 't', tty: true });
});

test('parseActionRequest names the missing or bad parameter', () => {
  const rows = [
    { name: 'no job', jobId: '', q: { action: 'a', allocID: 'x', task: 't' }, want: /missing job ID/ },
    { name: 'no action', jobId: 'j', q: { allocID: 'x', task: 't' }, want: /missing "action" parameter/ },
    { name: 'no allocID', jobId: 'j', q: { action: 'a', task: 't' }, want: /missing "allocID" parameter/ },
    { name: 'no task', jobId: 'j', q: { action: 'a', allocID: 'x' }, want: /missing "task" parameter/ },
    { name: 'bad tty', jobId: 'j', q: { action: 'a', allocID: 'x', task: 't', tty: 'maybe' }, want: /invalid value for "tty"/ },
  ];
  for (const r of rows) assert.throws(() => parseActionRequest(r.jobId, r.q), r.want, r.name);
});
