import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RestartTracker, type RestartAnswer } from '../../src/client/taskrunner/restarts/restart-tracker.js';
import type { RestartPolicy, JobType, TaskLifecycle } from '../../src/structs/job.js';
import { parseDuration } from '../../src/structs/duration.js';

const fail = { exitCode: 1, signal: 0, oomKilled: false };
const ok = { exitCode: 0, signal: 0, oomKilled: false };
const policy = (p: Partial<RestartPolicy> = {}): RestartPolicy => ({
  Attempts: 2,
  Interval: parseDuration('30m'),
  Delay: parseDuration('15s'),
  Mode: 'fail',
  ...p,
});

interface Row {
  name: string;
  policy: RestartPolicy;
  jobType: JobType;
  random: number;
  /** Each step: what happened and how much time passed before it. */
  steps: { afterMs: number; event: 'exitFail' | 'exitOk' | 'startErr' | 'startErrFatal' | 'killed' | 'restartTriggered' | 'restartTriggeredFailure' }[];
  want: Partial<RestartAnswer>[];
}

const rows: Row[] = [
  {
    name: 'service failure restarts within policy with delay plus jitter',
    policy: policy(),
    jobType: 'service',
    random: 0.5,
    steps: [{ afterMs: 0, event: 'exitFail' }],
    want: [{ decision: 'restart', delayMs: 15_000 + 1_875, reason: 'Restart within policy' }],
  },
  {
    name: 'mode fail gives up after the allowed attempts with Nomad\'s reason',
    policy: policy(),
    jobType: 'service',
    random: 0,
    steps: [{ afterMs: 0, event: 'exitFail' }, { afterMs: 1000, event: 'exitFail' }, { afterMs: 1000, event: 'exitFail' }],
    want: [
      { decision: 'restart', delayMs: 15_000 },
      { decision: 'restart', delayMs: 15_000 },
      { decision: 'noRestart', reason: 'Exceeded allowed attempts 2 in interval 30m0s and mode is "fail"' },
    ],
  },
  {
    name: 'mode delay waits until the interval resets',
    policy: policy({ Attempts: 1, Interval: parseDuration('1m'), Mode: 'delay' }),
    jobType: 'service',
    random: 0,
    steps: [{ afterMs: 0, event: 'exitFail' }, { afterMs: 20_000, event: 'exitFail' }],
    want: [{ decision: 'restart', delayMs: 15_000 }, { decision: 'restart', delayMs: 40_000, reason: 'Exceeded allowed attempts, applying a delay' }],
  },
  {
    name: 'a new interval resets the count',
    policy: policy({ Attempts: 1, Interval: parseDuration('1m') }),
    jobType: 'service',
    random: 0,
    steps: [{ afterMs: 0, event: 'exitFail' }, { afterMs: 61_000, event: 'exitFail' }],
    want: [{ decision: 'restart' }, { decision: 'restart', reason: 'Restart within policy' }],
  },
  {
    name: 'batch exit 0 is success: terminated, no restart',
    policy: policy({ Attempts: 3 }),
    jobType: 'batch',
    random: 0,
    steps: [{ afterMs: 0, event: 'exitOk' }],
    want: [{ decision: 'terminated' }],
  },
  {
    name: 'service exit 0 still restarts',
    policy: policy(),
    jobType: 'service',
    random: 0,
    steps: [{ afterMs: 0, event: 'exitOk' }],
    want: [{ decision: 'restart', delayMs: 15_000 }],
  },
  {
    name: 'unrecoverable start error does not restart',
    policy: policy(),
    jobType: 'service',
    random: 0,
    steps: [{ afterMs: 0, event: 'startErrFatal' }],
    want: [{ decision: 'noRestart', reason: 'Error was unrecoverable' }],
  },
  {
    name: 'recoverable start error restarts',
    policy: policy(),
    jobType: 'service',
    random: 0,
    steps: [{ afterMs: 0, event: 'startErr' }],
    want: [{ decision: 'restart', delayMs: 15_000 }],
  },
  {
    name: 'zero attempts: no restart',
    policy: policy({ Attempts: 0 }),
    jobType: 'service',
    random: 0,
    steps: [{ afterMs: 0, event: 'exitFail' }],
    want: [{ decision: 'noRestart', reason: 'Policy allows no restarts' }],
  },
  {
    name: 'killed wins over everything',
    policy: policy(),
    jobType: 'service',
    random: 0,
    steps: [{ afterMs: 0, event: 'killed' }],
    want: [{ decision: 'killed', delayMs: 0 }],
  },
  {
    name: 'user restart is immediate',
    policy: policy(),
    jobType: 'service',
    random: 0.9,
    steps: [{ afterMs: 0, event: 'restartTriggered' }],
    want: [{ decision: 'restart', delayMs: 0 }],
  },
  {
    name: 'a failure restart counts against the policy like a failed exit',
    policy: policy({ Attempts: 1 }),
    jobType: 'service',
    random: 0,
    steps: [{ afterMs: 0, event: 'restartTriggeredFailure' }, { afterMs: 1000, event: 'restartTriggeredFailure' }],
    want: [
      { decision: 'restart', delayMs: 15_000, reason: 'Restart within policy' },
      { decision: 'noRestart', reason: 'Exceeded allowed attempts 1 in interval 30m0s and mode is "fail"' },
    ],
  },
];

for (const row of rows) {
  test(`restart tracker: ${row.name}`, () => {
    let now = 1_000_000;
    const t = new RestartTracker(row.policy, row.jobType, () => row.random, now);
    row.steps.forEach((step, i) => {
      now += step.afterMs;
      switch (step.event) {
        case 'exitFail': t.setExitResult(fail); break;
        case 'exitOk': t.setExitResult(ok); break;
        case 'startErr': t.setStartError({ recoverable: true }); break;
        case 'startErrFatal': t.setStartError({ recoverable: false }); break;
        case 'killed': t.setExitResult(fail).setKilled(); break;
        case 'restartTriggered': t.setRestartTriggered(false).setExitResult(fail); break;
        case 'restartTriggeredFailure': t.setRestartTriggered(true).setExitResult(fail); break;
      }
      const got = t.next(now);
      for (const [k, v] of Object.entries(row.want[i]!)) assert.equal(got[k as keyof RestartAnswer], v, `step ${i} ${k}`);
    });
  });
}

test('restart tracker: a successful exit restarts a service main task and sidecars only (Nomad\'s restart-on-success)', () => {
  const cases: { jobType: JobType; lifecycle: TaskLifecycle | null; restarts: boolean }[] = [
    { jobType: 'service', lifecycle: null, restarts: true },
    { jobType: 'service', lifecycle: { Hook: 'prestart', Sidecar: false }, restarts: false },
    { jobType: 'service', lifecycle: { Hook: 'prestart', Sidecar: true }, restarts: true },
    { jobType: 'service', lifecycle: { Hook: 'poststart', Sidecar: false }, restarts: false },
    { jobType: 'batch', lifecycle: { Hook: 'poststart', Sidecar: true }, restarts: true },
    { jobType: 'service', lifecycle: { Hook: 'poststop', Sidecar: false }, restarts: false },
    { jobType: 'batch', lifecycle: null, restarts: false },
    { jobType: 'sysbatch', lifecycle: null, restarts: false },
  ];
  for (const c of cases) {
    const t = new RestartTracker(policy(), c.jobType, () => 0, 0, c.lifecycle);
    const got = t.setExitResult(ok).next(0);
    assert.equal(got.decision === 'restart', c.restarts, `${c.jobType} ${JSON.stringify(c.lifecycle)}: ${got.decision} (${got.reason})`);
  }
});
