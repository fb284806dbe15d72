/**
 * Web UI at scale (issue 30): first paint of the pages that grow with the cluster, with 10,000
 * clients and one job of 50,000 allocations, beside the goal (≤ 1 s). First paint is the time
 * from navigation start (cold cache, a fresh browser context per run) to the page's content in
 * the DOM: the clients list's first page and its total, the topology's cluster sums, a job's
 * task groups with their summaries and its allocation count, a job's allocations tab's first page.
 * The cluster is an in-process server seeded through its own registerNode and scheduler
 * (test/integration/helpers/scale-cluster.ts); Debian's Chromium is driven by playwright-core.
 *
 * Usage: node dist/bench/ui/ui-scale-bench.js [-n RUNS] [--nodes N] [--allocs N]
 * Writes bench/results/ui-scale.json.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser } from 'playwright-core';
import { startScaleCluster } from '../../test/integration/helpers/scale-cluster.js';
import { percentile } from '../percentile.js';

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const CHROMIUM = process.env.CARAVAN_CHROMIUM ?? '/usr/bin/chromium';
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const GOAL_FIRST_PAINT_MS = 1000;

/** A page and the DOM condition (evaluated in the page) that says its content is painted. */
interface Target {
  name: string;
  path: (jobId: string) => string;
  ready: string;
}

const TARGETS: Target[] = [
  {
    name: 'clients (first page + total)',
    path: () => '/ui/clients',
    ready: `document.querySelectorAll('[data-testid=client-row]').length >= 50 && !!document.querySelector('[data-testid=pager-total]')`,
  },
  {
    name: 'topology (cluster and datacenter sums)',
    path: () => '/ui/topology',
    ready: `!!document.querySelector('[data-testid=topo-node-total]') && !!document.querySelector('[data-testid=topo-dc]')`,
  },
  {
    name: 'job overview (group summaries + allocation total)',
    path: (id) => `/ui/jobs/${id}`,
    ready: `!!document.querySelector('[data-testid=task-group] [data-testid=alloc-summary]') && /\\d allocations/.test(document.querySelector('[data-testid=alloc-total]')?.textContent ?? '')`,
  },
  {
    name: "job's allocations tab (first page + total)",
    path: (id) => `/ui/jobs/${id}/allocations`,
    ready: `document.querySelectorAll('[data-testid=alloc-row]').length >= 50 && !!document.querySelector('[data-testid=pager-total]')`,
  },
];

function stats(xs: number[]): { median: number; p95: number; min: number; max: number } {
  const s = [...xs].sort((a, b) => a - b);
  return { median: percentile(s, 50), p95: percentile(s, 95), min: s[0]!, max: s[s.length - 1]! };
}

/** Cold load of `url`: ms from navigation start until `ready` holds in the page. */
async function firstPaintMs(browser: Browser, url: string, ready: string): Promise<number> {
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  try {
    const page = await ctx.newPage();
    await page.addInitScript((cond: string) => {
      const w = window as unknown as { __painted?: number };
      const check = new Function(`return (${cond});`) as () => boolean;
      new MutationObserver((_m, obs) => {
        if (w.__painted === undefined && check()) {
          w.__painted = performance.now();
          obs.disconnect();
        }
      }).observe(document, { childList: true, subtree: true, characterData: true });
    }, ready);
    await page.goto(url);
    await page.waitForFunction(() => (window as unknown as { __painted?: number }).__painted !== undefined, undefined, { timeout: 60_000 });
    return await page.evaluate(() => (window as unknown as { __painted: number }).__painted);
  } finally {
    await ctx.close();
  }
}

function numArg(name: string, dflt: number): number {
  const i = process.argv.indexOf(name);
  if (i < 0) return dflt;
  const v = Number(process.argv[i + 1]);
  if (!Number.isInteger(v) || v < 1) throw new Error(`${name} must be a positive integer`);
  return v;
}

async function main(): Promise<void> {
  const runs = numArg('-n', 5);
  const nodes = numArg('--nodes', 10_000);
  const allocs = numArg('--allocs', 50_000);
  if (!existsSync(join(REPO_ROOT, 'dist/ui/index.html'))) throw new Error('dist/ui is missing: run npm run build');
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} not found: apt-get install chromium`);

  const cluster = await startScaleCluster({ nodes, allocs });
  console.log(`seeded ${nodes.toLocaleString('en-US')} clients in ${cluster.seedSeconds.nodes.toFixed(1)} s, ${allocs.toLocaleString('en-US')} allocations placed in ${cluster.seedSeconds.placement.toFixed(1)} s`);
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS, headless: true });
  const results: Record<string, ReturnType<typeof stats> & { samples: number[] }> = {};
  try {
    for (const t of TARGETS) {
      const url = cluster.address + t.path(cluster.jobId);
      await firstPaintMs(browser, url, t.ready); // warm the server's code paths once
      const samples: number[] = [];
      for (let i = 0; i < runs; i++) samples.push(await firstPaintMs(browser, url, t.ready));
      const s = stats(samples);
      results[t.name] = { ...s, samples };
      console.log(`first paint, ${t.name}: median ${s.median.toFixed(0)} ms, p95 ${s.p95.toFixed(0)} ms (goal ≤ ${GOAL_FIRST_PAINT_MS} ms) ${s.median <= GOAL_FIRST_PAINT_MS ? 'MET' : 'NOT MET'}`);
    }
  } finally {
    await browser.close();
    await cluster.close();
  }
  mkdirSync(join(REPO_ROOT, 'bench/results'), { recursive: true });
  writeFileSync(
    join(REPO_ROOT, 'bench/results/ui-scale.json'),
    JSON.stringify({ when: new Date().toISOString(), nodes, allocs, runs, seedSeconds: cluster.seedSeconds, goalMs: GOAL_FIRST_PAINT_MS, firstPaintMs: results }, null, 2),
  );
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
