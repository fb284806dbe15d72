/**
 * The web UI with 10,000 clients and 50,000 allocations in a real browser (issue 30): the
 * clients list shows one page of rows and the total, and pages back and forth; a change to a
 * client on the page shows without a reload; the topology page shows the cluster summed and its
 * clients a page at a time; a job of 50,000 allocations shows its summary and its allocations a
 * page at a time. The cluster is an in-process server seeded through its own registerNode and
 * scheduler (scale-cluster.ts), so the test costs seconds of seeding, not 10,000 clients.
 * First-paint times are printed by bench/ui/ui-scale-bench.ts, not asserted here.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { launchBrowser, screenshot, type TestBrowser } from './helpers/browser.js';
import { SCALE_DATACENTERS, startScaleCluster, type ScaleCluster } from './helpers/scale-cluster.js';

const NODES = 10_000;
const ALLOCS = 50_000;
const PAGE = 50;

/** The full node IDs of the client rows shown (from their links). */
async function shownNodeIds(page: Page): Promise<string[]> {
  return page.locator('[data-testid=client-row] a').evaluateAll((as) => as.map((a) => (a.getAttribute('href') ?? '').split('/').pop() ?? ''));
}

describe('web UI at 10,000 clients and 50,000 allocations', () => {
  let cluster: ScaleCluster;
  let browser: TestBrowser;
  let page: Page;

  before(async () => {
    cluster = await startScaleCluster({ nodes: NODES, allocs: ALLOCS });
    browser = await launchBrowser();
    page = await browser.newPage();
  });
  after(async () => {
    await browser?.close();
    await cluster?.close();
  });

  test('the clients list shows a page of rows and the total, pages both ways and follows a change on its page', async () => {
    await page.goto(`${cluster.address}/ui/clients`);
    await page.getByTestId('pager-total').filter({ hasText: '10,000' }).waitFor();
    await page.locator('[data-testid=client-row]').nth(PAGE - 1).waitFor();
    assert.equal(await page.locator('[data-testid=client-row]').count(), PAGE, 'one page of rows, not 10,000');
    const first = await shownNodeIds(page);
    assert.deepEqual(first, [...first].sort(), 'a page is ordered by ID, as the API pages');

    await page.getByRole('button', { name: 'Next' }).click();
    await page.getByTestId('pager-position').filter({ hasText: 'Page 2' }).waitFor();
    await page.waitForFunction((firstId) => !document.querySelector(`[data-testid=client-row] a[href$="${firstId}"]`), first[0]!);
    const second = await shownNodeIds(page);
    assert.equal(second.length, PAGE);
    assert.ok(second[0]! > first[PAGE - 1]!, 'page 2 starts after page 1 ends');
    assert.match((await page.getByTestId('pager-position').textContent()) ?? '', /clients 51–100 of 10,000/);
    await screenshot(page, 'scale-clients');

    await page.getByRole('button', { name: 'Previous' }).click();
    await page.getByTestId('pager-position').filter({ hasText: 'Page 1' }).waitFor();
    await page.locator(`[data-testid=client-row] a[href$="${first[0]}"]`).waitFor();
    assert.deepEqual(await shownNodeIds(page), first);

    // A change to a client off the page, then one on it: the second shows without a reload, and
    // (events arrive in order) the refreshes since touched that client's row and nothing else.
    await page.evaluate(() => {
      const w = window as unknown as { __touched: Set<string> };
      w.__touched = new Set();
      new MutationObserver((records) => {
        for (const m of records) {
          const el = m.target instanceof Element ? m.target : m.target.parentElement;
          const row = el?.closest('[data-testid=client-row]');
          w.__touched.add(row?.querySelector('a')?.getAttribute('href') ?? 'outside any row');
        }
      }).observe(document.querySelector('table[aria-label=Clients]')!, { subtree: true, childList: true, characterData: true, attributes: true });
    });
    await cluster.server.updateNodeEligibility(second[0]!, 'ineligible');
    await cluster.server.updateNodeEligibility(first[3]!, 'ineligible');
    await page.locator('[data-testid=client-row]').nth(3).getByText('ineligible').waitFor();
    assert.equal(await page.locator('[data-testid=client-row]').count(), PAGE);
    const touched = await page.evaluate(() => [...(window as unknown as { __touched: Set<string> }).__touched]);
    assert.deepEqual(touched, [`/ui/clients/${first[3]}`], 'only the changed row was touched');
  });

  test('the topology page shows the cluster summed per datacenter and its clients a page at a time', async () => {
    await page.goto(`${cluster.address}/ui/topology`);
    await page.getByTestId('topo-node-total').filter({ hasText: '10,000' }).waitFor();
    await page.getByTestId('topo-alloc-total').filter({ hasText: '50,000' }).waitFor();
    assert.equal(await page.locator('[data-testid=topo-dc]').count(), SCALE_DATACENTERS.length);
    await page.locator('[data-testid=topo-node]').nth(PAGE - 1).waitFor();
    assert.equal(await page.locator('[data-testid=topo-node]').count(), PAGE, 'one page of client cards');
    // This page's clients hold few enough allocations to draw each of them.
    await page.locator('[data-testid=topo-node] .topo-alloc').first().waitFor();
    await screenshot(page, 'scale-topology');
  });

  test('a job of 50,000 allocations shows its summary and its allocations a page at a time', async () => {
    await page.goto(`${cluster.address}/ui/jobs/${cluster.jobId}`);
    await page.locator('[data-testid=task-group] [data-testid=alloc-summary]').filter({ hasText: '50000' }).waitFor();
    await page.getByTestId('alloc-total').filter({ hasText: '50,000 allocations' }).waitFor();
    assert.equal(await page.locator('[data-testid=alloc-row]').count(), 0, 'the overview draws none of the 50,000 allocations');
    await screenshot(page, 'scale-job');

    await page.getByTestId('alloc-total').getByRole('link').click();
    await page.getByTestId('pager-total').filter({ hasText: '50,000' }).waitFor();
    await page.locator('[data-testid=alloc-row]').nth(PAGE - 1).waitFor();
    assert.equal(await page.locator('[data-testid=alloc-row]').count(), PAGE);
    const firstPage = await page.locator('[data-testid=alloc-row]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-alloc')));
    await page.getByRole('button', { name: 'Next' }).click();
    await page.getByTestId('pager-position').filter({ hasText: 'Page 2' }).waitFor();
    await page.waitForFunction((ids) => !Array.from(document.querySelectorAll('[data-testid=alloc-row]')).some((r) => ids.includes(r.getAttribute('data-alloc'))), firstPage);
    assert.equal(await page.locator('[data-testid=alloc-row]').count(), PAGE);
  });
});
