/** Test helpers for the client: a task runner over the mock driver with a FakeClock. */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { FakeClock } from '../../src/time/clock.js';
import { createMockDriver } from '../../src/drivers/index.js';
import type { Driver } from '../../src/drivers/driver.js';
import type { Job, Task } from '../../src/structs/job.js';
import type { TaskState } from '../../src/structs/alloc.js';
import { TaskRunner } from '../../src/client/taskrunner/task-runner.js';
import { AllocDir } from '../../src/client/allocdir/alloc-dir.js';
import { MemoryStateDb, type StoredTask } from '../../src/client/state/state-db.js';
import type { NodeInfo } from '../../src/client/taskenv/task-env.js';
import { hostEnvLookup } from '../../src/client/taskenv/host-env.js';
import { mockAlloc, mockJob, mockNode, mockTask, mockTaskGroup } from '../mock/factories.js';

export const silentLogger = pino({ level: 'silent' });

export const testNode: NodeInfo = {
  id: '11111111-2222-3333-4444-555555555555',
  name: 'node-1',
  datacenter: 'dc1',
  region: 'global',
  nodeClass: 'linux-small',
  attributes: { 'kernel.name': 'linux', 'cpu.arch': 'amd64' },
  meta: { rack: 'r1' },
};

export function tempDir(): string {
  return mkdtempSync(join(tmpdir(), 'caravan-client-'));
}

/** A job with one group holding `tasks`. */
export function jobWith(tasks: Task[], overrides: Partial<Job> = {}): Job {
  return mockJob({ TaskGroups: [mockTaskGroup({ Tasks: tasks })], ...overrides });
}

export interface TaskRunnerHarness {
  tr: TaskRunner;
  clock: FakeClock;
  store: MemoryStateDb;
  driver: Driver;
  states: TaskState[];
  dataDir: string;
}

/** A task runner for a single-task allocation of `task`. */
export function taskRunnerHarness(
  task: Partial<Task>,
  opts: { jobType?: Job['Type']; clock?: FakeClock; driver?: Driver; store?: MemoryStateDb; restored?: StoredTask; allocId?: string; dataDir?: string; hostEnv?: Record<string, string | undefined> } = {},
): TaskRunnerHarness {
  const clock = opts.clock ?? new FakeClock();
  const driver = opts.driver ?? createMockDriver({ clock });
  const store = opts.store ?? new MemoryStateDb();
  const dataDir = opts.dataDir ?? tempDir();
  const t = mockTask(task);
  const job = jobWith([t], { Type: opts.jobType ?? 'service' });
  const alloc = mockAlloc(job, mockNode(), opts.allocId ? { ID: opts.allocId } : {});
  const states: TaskState[] = [];
  store.putAlloc(alloc);
  const tr = new TaskRunner({
    alloc,
    task: t,
    allocDir: new AllocDir(dataDir, alloc.ID),
    driver,
    node: testNode,
    store,
    clock,
    random: () => 0,
    logger: silentLogger,
    onStateChange: (_n, s) => states.push(s),
    restored: opts.restored,
    ...(opts.hostEnv ? { hostEnv: hostEnvLookup(opts.hostEnv) } : {}),
  });
  return { tr, clock, store, driver, states, dataDir };
}

/** Lets pending promise callbacks and I/O run. */
export async function settle(clock: FakeClock, rounds = 5): Promise<void> {
  for (let i = 0; i < rounds; i++) await clock.advanceAsync(0);
}

/** Polls (letting real I/O run between polls) until `cond` holds; throws after ~5 s. */
export async function until(clock: FakeClock, cond: () => boolean, what = 'condition'): Promise<void> {
  for (let i = 0; i < 1000; i++) {
    if (cond()) return;
    await clock.advanceAsync(0);
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** Kills a task runner while driving the fake clock (drivers stop on clock timers). */
export async function killDriven(clock: FakeClock, tr: TaskRunner): Promise<void> {
  let finished = false;
  const p = tr.kill().then(() => { finished = true; });
  await until(clock, () => finished, 'kill');
  await p;
}
