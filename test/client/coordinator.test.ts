import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Coordinator } from '../../src/client/allocrunner/tasklifecycle/coordinator.js';
import type { TaskLifecycle } from '../../src/structs/job.js';

const t = (Name: string, Lifecycle: TaskLifecycle | null = null) => ({ Name, Lifecycle });
type S = Record<string, { State: 'pending' | 'running' | 'dead'; Failed: boolean }>;
const st = (o: Record<string, string>): S =>
  Object.fromEntries(Object.entries(o).map(([k, v]) => [k, { State: v.replace('!', '') as 'pending', Failed: v.endsWith('!') }]));

const tasks = [
  t('init', { Hook: 'prestart', Sidecar: false }),
  t('side', { Hook: 'prestart', Sidecar: true }),
  t('main'),
  t('post', { Hook: 'poststart', Sidecar: false }),
  t('cleanup', { Hook: 'poststop', Sidecar: false }),
];

test('coordinator walks the stages in order', () => {
  const c = new Coordinator(tasks);
  assert.equal(c.state(), 'init');
  assert.equal(c.taskStatesUpdated(st({ init: 'pending', side: 'pending', main: 'pending', post: 'pending', cleanup: 'pending' })), 'prestart');
  assert.ok(c.isAllowed('init') && c.isAllowed('side'));
  assert.ok(!c.isAllowed('main') && !c.isAllowed('post') && !c.isAllowed('cleanup'));
  // The sidecar running is not enough: the ephemeral prestart task must succeed.
  assert.equal(c.taskStatesUpdated(st({ init: 'running', side: 'running', main: 'pending', post: 'pending', cleanup: 'pending' })), 'prestart');
  assert.equal(c.taskStatesUpdated(st({ init: 'dead', side: 'running', main: 'pending', post: 'pending', cleanup: 'pending' })), 'main');
  assert.ok(c.isAllowed('main') && c.isAllowed('side') && !c.isAllowed('init') && !c.isAllowed('post'));
  assert.equal(c.taskStatesUpdated(st({ init: 'dead', side: 'running', main: 'running', post: 'pending', cleanup: 'pending' })), 'poststart');
  assert.ok(c.isAllowed('post'));
  assert.equal(c.taskStatesUpdated(st({ init: 'dead', side: 'running', main: 'running', post: 'dead', cleanup: 'pending' })), 'wait_alloc');
  assert.ok(!c.isAllowed('cleanup'));
  assert.equal(c.taskStatesUpdated(st({ init: 'dead', side: 'dead', main: 'dead', post: 'dead', cleanup: 'pending' })), 'poststop');
  assert.ok(c.isAllowed('cleanup') && !c.isAllowed('main'));
});

test('a failed prestart task blocks main; poststop runs once the rest is dead', () => {
  const c = new Coordinator(tasks);
  c.taskStatesUpdated(st({ init: 'pending', side: 'pending', main: 'pending', post: 'pending', cleanup: 'pending' }));
  assert.equal(c.taskStatesUpdated(st({ init: 'dead!', side: 'running', main: 'pending', post: 'pending', cleanup: 'pending' })), 'prestart');
  assert.ok(!c.isAllowed('main'));
  assert.equal(c.taskStatesUpdated(st({ init: 'dead!', side: 'dead', main: 'dead', post: 'dead', cleanup: 'pending' })), 'poststop');
});

test('a group with only main tasks goes straight to main', () => {
  const c = new Coordinator([t('a'), t('b')]);
  assert.equal(c.taskStatesUpdated(st({ a: 'pending', b: 'pending' })), 'main');
  assert.ok(c.isAllowed('a') && c.isAllowed('b'));
});

test('restore skips init and catches up with running tasks', () => {
  const c = new Coordinator(tasks);
  // In init this would stay stuck because tasks are not all pending.
  assert.equal(c.restore(st({ init: 'dead', side: 'running', main: 'running', post: 'dead', cleanup: 'pending' })), 'wait_alloc');
  assert.ok(c.isAllowed('main'));
});

test('skipPoststop keeps the poststop gate shut once every other task is dead (max_run_duration)', () => {
  const c = new Coordinator(tasks);
  c.taskStatesUpdated(st({ init: 'pending', side: 'pending', main: 'pending', post: 'pending', cleanup: 'pending' }));
  c.taskStatesUpdated(st({ init: 'dead', side: 'running', main: 'running', post: 'dead', cleanup: 'pending' }));
  c.skipPoststop();
  assert.deepEqual(c.poststopTasks(), ['cleanup']);
  assert.ok(c.isAllowed('main'), 'only poststop is affected');
  assert.equal(c.taskStatesUpdated(st({ init: 'dead', side: 'dead', main: 'dead', post: 'dead', cleanup: 'pending' })), 'poststop');
  assert.ok(!c.isAllowed('cleanup'));
});
