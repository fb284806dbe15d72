/**
 * `caravan job restart -batch-wait ask` on a real terminal (a pseudo-terminal) against a dev
 * agent: the question after each batch, an invalid answer asked again, a duration answer
 * becoming the wait, and "n" canceling the restart with the remaining batches untouched.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp } from 'node:fs/promises';
import pty from '@lydell/node-pty';
import type { Allocation } from '../../src/structs/index.js';
import { api, CARAVAN_BIN, REPO_ROOT } from './helpers/agent-process.js';
import { runJob, sleeperJobHcl, startDevAgent, teardown, waitFor, waitRunning } from './helpers/client-agent.js';

const TRIO = sleeperJobHcl('trio', 3);

/** `caravan job restart …` on a terminal, typing each reply once its prompt shows. */
async function restartOnTerminal(address: string, args: string[], answers: [RegExp, string][]): Promise<{ code: number; screen: string }> {
  const env = { ...process.env, CARAVAN_ADDR: address, NOMAD_ADDR: '' } as Record<string, string>;
  const term = pty.spawn(process.execPath, [CARAVAN_BIN, 'job', 'restart', ...args], { cwd: REPO_ROOT, env, cols: 200, rows: 50, name: 'xterm' });
  let screen = '';
  term.onData((d) => (screen += d));
  const exited = new Promise<number>((r) => term.onExit(({ exitCode }) => r(exitCode)));
  try {
    let from = 0;
    for (const [prompt, reply] of answers) {
      await waitFor(`${prompt} on the terminal`, () => (prompt.test(screen.slice(from)) ? true : undefined), 30_000);
      from = screen.length;
      term.write(`${reply}\r`);
    }
    const code = await Promise.race([exited, new Promise<number>((_, rej) => setTimeout(() => rej(new Error(`no exit; screen:\n${screen}`)), 60_000))]);
    return { code, screen };
  } finally {
    term.kill();
  }
}

/** How many of the allocations have restarted their task once and run again. */
const restartedAndRunning = async (address: string, ids: string[]): Promise<number> => {
  const allocs = await Promise.all(ids.map(async (id) => (await api<Allocation>(address, 'GET', `/v1/allocation/${id}`)).body));
  return allocs.filter((a) => a.TaskStates?.['t']?.Restarts === 1 && a.TaskStates['t'].State === 'running').length;
};

test('job restart -batch-wait ask asks before each next batch on a terminal', async () => {
  const dir = await mkdtemp('/tmp/cv-ask-');
  const agent = await startDevAgent({ dataDir: dir });
  const a = agent.address;
  try {
    await runJob(a, dir, 'trio', TRIO);
    const ids = (await waitRunning(a, 'trio', 3)).map((x) => x.ID);

    // An invalid answer is refused and asked again; a duration becomes the wait, no more questions.
    const PROMPT = /Proceed with next batch\? \[Y\/n\/<duration>\]/;
    const run = await restartOnTerminal(a, ['-batch-wait', 'ask', 'trio'], [[PROMPT, 'soon'], [PROMPT, '1s']]);
    assert.equal(run.code, 0, run.screen);
    assert.match(run.screen, /Invalid option "soon"/);
    assert.match(run.screen, /Proceeding restarts with new wait time of 1s/);
    assert.match(run.screen, /Waiting 1s before restarting the next batch/);
    assert.equal((run.screen.match(/Proceed with next batch\?/g) ?? []).length, 2, 'asked twice after the first batch, never after');
    assert.match(run.screen, /Job restarted successfully!/);
    await waitFor('every allocation restarted and running', async () => ((await restartedAndRunning(a, ids)) === 3 ? true : undefined));

    // "n" cancels: the first batch was restarted again, the others not.
    const before = await Promise.all(ids.map(async (id) => (await api<Allocation>(a, 'GET', `/v1/allocation/${id}`)).body.TaskStates?.['t']?.Restarts ?? 0));
    const canceled = await restartOnTerminal(a, ['-batch-wait', 'ask', 'trio'], [[PROMPT, 'n']]);
    assert.equal(canceled.code, 0, canceled.screen);
    assert.match(canceled.screen, /Job restart canceled\./);
    const again = await waitFor('the first batch restarted again', async () => {
      const now = await Promise.all(ids.map(async (id) => (await api<Allocation>(a, 'GET', `/v1/allocation/${id}`)).body.TaskStates?.['t']?.Restarts ?? 0));
      const more = now.filter((n, i) => n > before[i]!).length;
      return more >= 1 ? more : undefined;
    });
    assert.equal(again, 1, 'only the first batch');
  } finally {
    await teardown(agent, dir);
  }
});
