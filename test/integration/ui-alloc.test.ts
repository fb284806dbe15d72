/**
 * The web UI's allocation pages in a real browser against a real dev agent: task states and
 * events, logs followed live, an exec terminal (xterm.js over the exec websocket) that runs what
 * is typed and follows resizes, and the allocation's files.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import type { AllocListStub } from '../../src/structs/index.js';
import { api, startAgent, type AgentProcess } from './helpers/agent-process.js';
import { launchBrowser, screenshot, type TestBrowser } from './helpers/browser.js';
import { waitUntil } from './helpers/poseidon-client.js';

const SCRIPT = 'i=0; echo ready > ${NOMAD_TASK_DIR}/marker.txt; while true; do echo tick-$i; i=$((i+1)); sleep 0.3; done';

function tickerJob(id: string): Record<string, unknown> {
  return {
    ID: id,
    Type: 'service',
    Datacenters: ['dc1'],
    TaskGroups: [
      {
        Name: 'g',
        Count: 1,
        Update: { MaxParallel: 0 },
        Tasks: [{ Name: 'ticker', Driver: 'raw_exec', Config: { command: '/bin/sh', args: ['-c', SCRIPT] }, Resources: { CPU: 20, MemoryMB: 16 } }],
      },
    ],
  };
}

/** The text xterm.js shows (its rows, joined). */
async function terminalText(page: Page): Promise<string> {
  return page.locator('[data-testid=terminal] .xterm-rows').innerText();
}

describe('web UI: allocation, logs, exec, files', () => {
  let agent: AgentProcess;
  let browser: TestBrowser;
  let page: Page;
  let allocId: string;

  before(async () => {
    agent = await startAgent({ roleArgs: ['-dev'] });
    browser = await launchBrowser();
    page = await browser.newPage();
    const reg = await api(agent.address, 'PUT', '/v1/jobs', { Job: tickerJob('ticker') });
    assert.equal(reg.status, 200, reg.text);
    const alloc = await waitUntil('a running ticker allocation', async () => {
      const l = await api<AllocListStub[]>(agent.address, 'GET', '/v1/job/ticker/allocations');
      return l.body.find((a) => a.ClientStatus === 'running');
    });
    allocId = alloc.ID;
  });
  after(async () => {
    await browser?.close();
    await agent?.stop();
    await agent?.cleanup();
  });

  test('the allocation page shows the task state, its events and resource charts', async () => {
    await page.goto(`${agent.address}/ui/jobs/ticker/allocations`);
    await page.locator(`[data-testid=alloc-row][data-alloc="${allocId}"] a`).first().click();
    await page.waitForURL(new RegExp(`/ui/allocations/${allocId}$`));
    const task = page.locator('[data-testid=task-state][data-task=ticker]');
    await task.getByText('running').first().waitFor();
    await task.getByText('Started', { exact: true }).waitFor();
    await page.locator('[data-testid=alloc-stats]').getByText(/Memory \(RSS\): \d/).waitFor();
    await screenshot(page, 'allocation');
  });

  test("a task's stdout lines appear live in the log view", async () => {
    await page.locator('[data-testid=task-state][data-task=ticker]').getByRole('link', { name: 'Logs' }).click();
    const log = page.locator('[data-testid=log]');
    await log.getByText(/tick-\d+/).first().waitFor();
    const first = Math.max(...((await log.innerText()).match(/tick-(\d+)/g) ?? []).map((m) => Number(m.slice(5))));
    // A line the task writes after the page has rendered shows up without a reload.
    await log.getByText(`tick-${first + 3}`).waitFor();
    await screenshot(page, 'task-logs');
  });

  test('the exec terminal runs what is typed and follows a resize', async () => {
    await page.goto(`${agent.address}/ui/allocations/${allocId}/ticker/exec`);
    await page.getByRole('button', { name: 'Connect' }).click();
    await page.getByTestId('exec-status').getByText('Connected').waitFor();
    await page.locator('[data-testid=terminal] .xterm').click();
    await page.keyboard.type('echo hello-$((40+2))\n');
    await waitUntil('echo output in the terminal', async () => ((await terminalText(page)).includes('hello-42') ? true : undefined), 15_000);
    await screenshot(page, 'exec-terminal');

    await page.keyboard.type('stty size\n');
    const before = await waitUntil('stty size', async () => /(\d+) (\d+)\s*\n/.exec((await terminalText(page)).split('stty size').pop() ?? '')?.[0]?.trim(), 15_000);
    await page.setViewportSize({ width: 700, height: 500 });
    await page.keyboard.type('clear; stty size\n');
    const afterSize = await waitUntil(
      'stty size after resize',
      async () => {
        const m = /(\d+) (\d+)/.exec((await terminalText(page)).split('stty size').pop() ?? '')?.[0];
        return m && m !== before ? m : undefined;
      },
      15_000,
    );
    assert.notEqual(afterSize, before);
    await page.keyboard.type('exit 3\n');
    await page.getByTestId('exec-status').getByText('Exited with code 3').waitFor();
    await page.setViewportSize({ width: 1280, height: 800 });
  });

  test("the allocation's files can be browsed and read", async () => {
    await page.goto(`${agent.address}/ui/allocations/${allocId}/fs?path=/`);
    await page.getByRole('link', { name: 'ticker/' }).click();
    await page.getByRole('link', { name: 'local/' }).click();
    await page.getByRole('link', { name: 'marker.txt' }).click();
    await page.getByTestId('file-content').getByText('ready').waitFor();
  });

  test("a client's page lists its allocations; eligibility toggles from the UI; topology and servers show the cluster", async () => {
    await page.goto(`${agent.address}/ui/clients`);
    await page.locator('[data-testid=client-row] a').first().click();
    await page.waitForURL(/\/ui\/clients\/[0-9a-f-]+$/);
    await page.locator(`[data-testid=alloc-row][data-alloc="${allocId}"]`).waitFor();
    await page.getByText('raw_exec').first().waitFor();
    await screenshot(page, 'client');
    await page.getByRole('button', { name: 'Mark ineligible' }).click();
    await page.getByRole('button', { name: 'Mark eligible' }).waitFor();
    const nodes = await api<Array<{ SchedulingEligibility: string }>>(agent.address, 'GET', '/v1/nodes');
    assert.equal(nodes.body[0]?.SchedulingEligibility, 'ineligible');
    await page.getByRole('button', { name: 'Mark eligible' }).click();
    await page.getByRole('button', { name: 'Mark ineligible' }).waitFor();

    await page.getByRole('link', { name: 'Topology' }).click();
    await page.locator('[data-testid=topo-node]').getByRole('link', { name: 'ticker.g[0]' }).waitFor();
    await screenshot(page, 'topology');
    await page.getByRole('link', { name: 'Servers' }).click();
    await page.locator('[data-testid=server-row]').getByText('leader').waitFor();
  });

  test('restarting an allocation from its page restarts the task', async () => {
    await page.goto(`${agent.address}/ui/allocations/${allocId}`);
    const task = page.locator('[data-testid=task-state][data-task=ticker]');
    await task.getByText('Restarts: 0.').waitFor();
    await page.getByRole('button', { name: 'Restart' }).click();
    await page.getByRole('button', { name: 'Yes, restart' }).click();
    await task.getByText('Restarts: 1.').waitFor();
    await task.getByText('Restart Signaled').waitFor();
  });

  test("an evaluation's placement failure is explained on the job page", async () => {
    const job = tickerJob('unplaceable') as { TaskGroups: Array<Record<string, unknown>> };
    job.TaskGroups[0]!.Constraints = [{ LTarget: '${attr.kernel.name}', RTarget: 'plan9', Operand: '=' }];
    const reg = await api(agent.address, 'PUT', '/v1/jobs', { Job: job });
    assert.equal(reg.status, 200, reg.text);
    await page.goto(`${agent.address}/ui/jobs/unplaceable`);
    await page.getByTestId('placement-failures').getByText(/Filtered by constraint/).waitFor();
    await page.getByRole('navigation', { name: 'Job sections' }).getByRole('link', { name: 'Evaluations' }).click();
    await page.getByText('waiting for a node with room').waitFor();
    const failures = page.getByTestId('placement-failures').first();
    await failures.getByText(/not placed/).waitFor();
    await failures.getByText(/Filtered by constraint/).waitFor();
    await screenshot(page, 'placement-failure');
  });

  test('a client is drained and the drain stopped from its page', async () => {
    await page.goto(`${agent.address}/ui/clients`);
    await page.locator('[data-testid=client-row] a').first().click();
    await page.getByLabel('Deadline').fill('10m');
    await page.getByRole('button', { name: 'Drain' }).click();
    await page.getByRole('button', { name: 'Yes, drain this client' }).click();
    await page.getByText(/Draining since/).waitFor();
    const drained = await api<Array<{ Drain: boolean; SchedulingEligibility: string }>>(agent.address, 'GET', '/v1/nodes');
    assert.equal(drained.body[0]?.Drain, true);
    assert.equal(drained.body[0]?.SchedulingEligibility, 'ineligible');
    await screenshot(page, 'client-draining');
    await page.getByRole('button', { name: 'Stop drain' }).click();
    await page.getByRole('button', { name: 'Drain' }).waitFor();
    const after = await api<Array<{ Drain: boolean; SchedulingEligibility: string }>>(agent.address, 'GET', '/v1/nodes');
    assert.equal(after.body[0]?.Drain, false);
  });
});
