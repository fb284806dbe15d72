import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseDuration } from '../../src/structs/duration.js';
import { MAX_RUN_DURATION_REASON } from '../../src/client/taskrunner/hooks/max-run-duration-hook.js';
import { taskRunnerHarness, until } from './harness.js';

test('max_run_duration: a batch task still running at its deadline is killed with Nomad\'s reason, not failed', async () => {
  const h = taskRunnerHarness({ Config: { run_for: '1h' }, MaxRunDuration: parseDuration('5s'), KillTimeout: parseDuration('1s') }, { jobType: 'batch' });
  const done = h.tr.run();
  await until(h.clock, () => h.tr.state().State === 'running');
  await h.clock.advanceAsync(4_000);
  assert.equal(h.tr.state().State, 'running', 'still running before the deadline');
  let finished = false;
  void done.then(() => { finished = true; });
  await h.clock.advanceAsync(1_000);
  await until(h.clock, () => finished, 'the kill');
  const s = h.tr.state();
  assert.equal(s.State, 'dead');
  assert.equal(s.Failed, false);
  const killing = s.Events.find((e) => e.Type === 'Killing' && e.KillReason === MAX_RUN_DURATION_REASON);
  assert.ok(killing, JSON.stringify(s.Events.map((e) => [e.Type, e.DisplayMessage])));
  assert.equal(killing.DisplayMessage, 'allocation exceeded max_run_duration');
});

test('max_run_duration: a task that finishes first is left alone', async () => {
  const h = taskRunnerHarness({ Config: { run_for: '2s', exit_code: 0 }, MaxRunDuration: parseDuration('5s') }, { jobType: 'batch' });
  const done = h.tr.run();
  await until(h.clock, () => h.tr.state().State === 'running');
  await h.clock.advanceAsync(2_000);
  await done;
  await h.clock.advanceAsync(10_000);
  const s = h.tr.state();
  assert.equal(s.State, 'dead');
  assert.deepEqual(s.Events.map((e) => e.Type), ['Received', 'Task Setup', 'Started', 'Terminated']);
});
