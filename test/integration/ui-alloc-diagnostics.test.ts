/**
 * The web UI when something has gone wrong, in a real browser against a real dev agent: the
 * allocation page's full-width task cards and charts with a scale and a limit, a failed
 * allocation offering no actions, a dead task's logs not "Following" and offering no Exec,
 * versions numbered by their Version with Nomad's field diff, a client's allocations newest
 * first, and the allocation table usable in a 700 px window.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import type { AllocListStub } from '../../src/structs/index.js';
import { api, startAgent, type AgentProcess } from './helpers/agent-process.js';
import { launchBrowser, screenshot, type TestBrowser } from './helpers/browser.js';
import { waitUntil } from './helpers/poseidon-client.js';

const HOUR_NS = 3_600_000_000_000;

function tickerJob(version: string): Record<string, unknown> {
  return {
    ID: 'ticker',
    Type: 'service',
    Datacenters: ['dc1'],
    TaskGroups: [
      {
        Name: 'g',
        Count: 1,
        Update: { MaxParallel: 0 },
        Tasks: [{ Name: 'ticker', Driver: 'raw_exec', Env: { VERSION: version }, Config: { command: '/bin/sh', args: ['-c', 'while true; do echo tick; sleep 1; done'] }, Resources: { CPU: 20, MemoryMB: 16 } }],
      },
    ],
  };
}

/** A batch job whose only task fails at once and is neither restarted nor rescheduled. */
const CRASH_JOB = {
  ID: 'crash',
  Type: 'batch',
  Datacenters: ['dc1'],
  TaskGroups: [
    {
      Name: 'g',
      Count: 1,
      RestartPolicy: { Attempts: 0, Interval: HOUR_NS, Delay: 1_000_000_000, Mode: 'fail' },
      ReschedulePolicy: { Attempts: 0, Interval: HOUR_NS, Delay: 1_000_000_000, DelayFunction: 'constant', MaxDelay: 0, Unlimited: false },
      Tasks: [{ Name: 'boom', Driver: 'raw_exec', Config: { command: '/bin/sh', args: ['-c', 'echo boom-on-stderr >&2; exit 3'] }, Resources: { CPU: 20, MemoryMB: 16 } }],
    },
  ],
};

describe('web UI: allocation diagnostics', () => {
  let agent: AgentProcess;
  let browser: TestBrowser;
  let page: Page;
  let running: AllocListStub;
  let failed: AllocListStub;

  before(async () => {
    agent = await startAgent({ roleArgs: ['-dev'] });
    for (const job of [tickerJob('v0'), CRASH_JOB]) {
      const reg = await api(agent.address, 'PUT', '/v1/jobs', { Job: job });
      assert.equal(reg.status, 200, reg.text);
    }
    failed = await waitUntil('a failed crash allocation', async () => (await api<AllocListStub[]>(agent.address, 'GET', '/v1/job/crash/allocations')).body.find((a) => a.ClientStatus === 'failed'), 30_000);
    await waitUntil('a running ticker', async () => (await api<AllocListStub[]>(agent.address, 'GET', '/v1/job/ticker/allocations')).body.find((a) => a.ClientStatus === 'running'), 30_000);
    // Version 1 changes one variable of the task: it replaces the allocation.
    const reg = await api(agent.address, 'PUT', '/v1/jobs', { Job: tickerJob('v1') });
    assert.equal(reg.status, 200, reg.text);
    running = await waitUntil('a running ticker at version 1', async () => (await api<AllocListStub[]>(agent.address, 'GET', '/v1/job/ticker/allocations')).body.find((a) => a.ClientStatus === 'running' && a.JobVersion === 1), 30_000);
    browser = await launchBrowser();
    page = await browser.newPage();
  });
  after(async () => {
    await browser?.close();
    await agent?.stop();
    await agent?.cleanup();
  });

  test('task cards use the width; CPU and memory charts have a scale and the reserved limit', async () => {
    await page.goto(`${agent.address}/ui/allocations/${running.ID}`);
    const card = page.locator('[data-testid=task-state][data-task=ticker]');
    await card.getByText('Started', { exact: true }).waitFor();
    const cardBox = await card.boundingBox();
    const mainBox = await page.locator('main').boundingBox();
    assert.ok(cardBox && mainBox && cardBox.width > mainBox.width * 0.8, `the task card is ${cardBox?.width}px of ${mainBox?.width}px`);
    assert.ok((await card.getByTestId('task-events').locator('tr').count()) >= 2);

    const cpu = page.getByTestId('chart-cpu');
    await cpu.getByTestId('chart-scale').getByText('20 MHz').waitFor();
    await cpu.getByText(/of 20 MHz reserved/).waitFor();
    await cpu.getByTestId('limit-line').waitFor({ state: 'attached' });
    const memory = page.getByTestId('chart-memory');
    await memory.getByTestId('chart-scale').getByText('16 MiB').waitFor();
    await memory.getByTestId('limit-line').waitFor({ state: 'attached' });
    await screenshot(page, 'allocation-running');
  });

  test('a failed allocation offers no stop, restart or signals; its dead task offers no Exec', async () => {
    await page.goto(`${agent.address}/ui/allocations/${failed.ID}`);
    const card = page.locator('[data-testid=task-state][data-task=boom]');
    await card.getByText('Not Restarting', { exact: true }).waitFor();
    assert.equal(await page.getByLabel('Allocation actions').count(), 0);
    assert.equal(await page.getByRole('button', { name: 'Stop' }).count(), 0);
    assert.equal(await page.getByRole('button', { name: 'Send signal' }).count(), 0);
    assert.equal(await card.getByRole('link', { name: 'Exec' }).count(), 0);
    await screenshot(page, 'allocation-failed');

    await card.getByRole('link', { name: 'Logs' }).click();
    await page.getByRole('button', { name: 'stderr' }).click();
    await page.getByTestId('log').getByText('boom-on-stderr').waitFor();
    const state = await page.getByTestId('log-state').innerText();
    assert.match(state, /Task boom is dead/);
    assert.doesNotMatch(state, /Following/);
    assert.equal(await page.getByRole('link', { name: 'Exec' }).count(), 0);
  });

  test('versions are numbered by their Version and show Nomad field diff', async () => {
    await page.goto(`${agent.address}/ui/jobs/ticker/versions`);
    const versions = page.getByTestId('version');
    await versions.first().getByText('Version 1', { exact: false }).waitFor();
    assert.deepEqual(await versions.evaluateAll((els) => els.map((e) => e.getAttribute('data-version'))), ['1', '0']);
    assert.equal(await page.locator('ul.versions').evaluate((el) => getComputedStyle(el).listStyleType), 'none', 'no list numbering beside the versions');
    const diff = versions.first().getByTestId('job-diff');
    await diff.getByText(/Env\[VERSION\]: "v0" => "v1"/).waitFor();
    assert.equal(await diff.getByText(/"Datacenters/).count(), 0, 'unchanged fields are left out');
    await screenshot(page, 'job-versions');
  });

  test("a client's allocations are listed newest first", async () => {
    const all = (await api<AllocListStub[]>(agent.address, 'GET', '/v1/allocations')).body;
    assert.ok(all.length >= 3);
    const expected = [...all].sort((a, b) => b.CreateIndex - a.CreateIndex).map((a) => a.ID);
    await page.goto(`${agent.address}/ui/clients/${running.NodeID}`);
    const rows = page.locator('[data-testid=alloc-row]');
    await waitUntil('every allocation listed', async () => ((await rows.count()) === all.length ? true : undefined));
    assert.deepEqual(await rows.evaluateAll((els) => els.map((e) => e.getAttribute('data-alloc'))), expected);
  });

  test('at 700 px the allocation table keeps its columns and scrolls inside itself', async () => {
    await page.setViewportSize({ width: 700, height: 800 });
    try {
      await page.goto(`${agent.address}/ui/jobs/ticker/allocations`);
      const table = page.getByRole('table', { name: 'Allocations' });
      await table.locator('[data-testid=alloc-row]').first().waitFor();
      for (const col of ['ID', 'Name', 'Client', 'Status', 'Desired', 'Version', 'Created', 'Modified']) {
        assert.ok(await table.getByRole('columnheader', { name: col, exact: true }).isVisible(), `column ${col} is shown`);
      }
      const pageScroll = await page.evaluate(() => document.documentElement.scrollWidth);
      assert.ok(pageScroll <= 700, `the page itself does not scroll sideways (${pageScroll}px)`);
      await screenshot(page, 'allocations-700px');
    } finally {
      await page.setViewportSize({ width: 1280, height: 800 });
    }
  });
});
