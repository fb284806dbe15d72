/**
 * Web UI benchmark (GOALS.md): the size of the UI's JavaScript and CSS gzipped (goal ≤ 400 KB),
 * the first load of /ui/jobs on loopback to the first rendered job row (goal ≤ 300 ms, cold
 * cache, a fresh browser context per run), and the delay from a job registration to its row
 * appearing in an open jobs list (goal ≤ 1 s). Drives Debian's Chromium with playwright-core
 * against its own `caravan agent -dev`.
 *
 * Usage: node dist/bench/ui/ui-bench.js [-n N]   (N runs of each timing, default 15)
 * Writes bench/results/ui.json.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { chromium, type Browser } from 'playwright-core';
import { startBenchAgent } from '../dev-agent.js';
import { percentile } from '../percentile.js';

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const UI_DIR = join(REPO_ROOT, 'dist/ui');
const CHROMIUM = process.env.CARAVAN_CHROMIUM ?? '/usr/bin/chromium';
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

const GOAL_ASSETS_KB = 400;
const GOAL_FIRST_ROW_MS = 300;
const GOAL_LIVE_ROW_MS = 1000;
const PRELOADED_JOBS = 20;


function stats(xs: number[]): { median: number; p95: number; min: number; max: number } {
  const s = [...xs].sort((a, b) => a - b);
  return { median: percentile(s, 50), p95: percentile(s, 95), min: s[0]!, max: s[s.length - 1]! };
}

/** Gzipped sizes (level 9, as a server would send them) of the entry page's assets and of all. */
function assetSizes(): { initialKB: number; totalKB: number; files: Record<string, number> } {
  const html = readFileSync(join(UI_DIR, 'index.html'), 'utf8');
  const initial = new Set([...html.matchAll(/(?:src|href)="\/ui\/(assets\/[^"]+)"/g)].map((m) => m[1]!));
  const files: Record<string, number> = {};
  let initialBytes = 0;
  let total = 0;
  for (const f of readdirSync(join(UI_DIR, 'assets'))) {
    if (!/\.(js|css)$/.test(f)) continue;
    const gz = gzipSync(readFileSync(join(UI_DIR, 'assets', f)), { level: 9 }).length;
    files[f] = Math.round(gz / 102.4) / 10;
    total += gz;
    if (initial.has(`assets/${f}`)) initialBytes += gz;
  }
  return { initialKB: Math.round(initialBytes / 102.4) / 10, totalKB: Math.round(total / 102.4) / 10, files };
}

function job(id: string): Record<string, unknown> {
  return {
    ID: id,
    Type: 'batch',
    Datacenters: ['dc1'],
    TaskGroups: [{ Name: 'g', Count: 1, Tasks: [{ Name: 't', Driver: 'raw_exec', Config: { command: '/bin/sleep', args: ['3600'] }, Resources: { CPU: 10, MemoryMB: 10 } }] }],
  };
}

async function register(addr: string, id: string): Promise<void> {
  const res = await fetch(`${addr}/v1/jobs`, { method: 'PUT', body: JSON.stringify({ Job: job(id) }), headers: { 'Content-Type': 'application/json' } });
  if (!res.ok) throw new Error(`register ${id}: ${res.status} ${await res.text()}`);
}

/** Cold first load: ms from navigation start to the first job row in the DOM. */
async function firstRowMs(browser: Browser, addr: string): Promise<number> {
  const ctx = await browser.newContext();
  try {
    const page = await ctx.newPage();
    await page.addInitScript(() => {
      const w = window as unknown as { __firstRow?: number };
      new MutationObserver((_m, obs) => {
        if (document.querySelector('[data-testid=job-row]')) {
          w.__firstRow = performance.now();
          obs.disconnect();
        }
      }).observe(document, { childList: true, subtree: true });
    });
    await page.goto(`${addr}/ui/jobs`);
    await page.waitForFunction(() => (window as unknown as { __firstRow?: number }).__firstRow !== undefined);
    return await page.evaluate(() => (window as unknown as { __firstRow: number }).__firstRow);
  } finally {
    await ctx.close();
  }
}

async function main(): Promise<void> {
  const nIdx = process.argv.indexOf('-n');
  const n = nIdx > 0 ? Number(process.argv[nIdx + 1]) : 15;
  if (!Number.isInteger(n) || n < 1) throw new Error('-n must be a positive integer');
  if (!existsSync(join(UI_DIR, 'index.html'))) throw new Error(`${UI_DIR} is missing: run npm run build`);
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} not found: apt-get install chromium`);

  const sizes = assetSizes();
  console.log(`UI assets gzipped: ${sizes.totalKB} KB in all (goal ≤ ${GOAL_ASSETS_KB} KB); ${sizes.initialKB} KB loaded by the first page (the terminal's xterm.js loads on the exec page only)`);

  const agent = await startBenchAgent();
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS, headless: true });
  try {
    for (let i = 0; i < PRELOADED_JOBS; i++) await register(agent.address, `bench-${i}`);
    await firstRowMs(browser, agent.address); // warm the agent's file reads once
    const first: number[] = [];
    for (let i = 0; i < n; i++) first.push(await firstRowMs(browser, agent.address));
    const f = stats(first);
    console.log(`first load of /ui/jobs → first job row (cold cache, ${PRELOADED_JOBS} jobs): median ${f.median.toFixed(0)} ms, p95 ${f.p95.toFixed(0)} ms (goal ≤ ${GOAL_FIRST_ROW_MS} ms)`);

    const ctx = await browser.newContext();
    const page = await ctx.newPage();
    await page.goto(`${agent.address}/ui/jobs`);
    await page.locator('[data-testid=job-row]').first().waitFor();
    await page.getByText('Live', { exact: true }).waitFor();
    // The page records (Date.now(), same clock as this process) when each row first appears.
    await page.evaluate(() => {
      const w = window as unknown as { __seen: Record<string, number> };
      w.__seen = {};
      new MutationObserver(() => {
        for (const row of Array.from(document.querySelectorAll<HTMLElement>('[data-testid=job-row]'))) {
          const id = row.dataset.job ?? '';
          if (!(id in w.__seen)) w.__seen[id] = Date.now();
        }
      }).observe(document.body, { childList: true, subtree: true });
    });
    const live: number[] = [];
    for (let i = 0; i < n; i++) {
      const id = `live-${i}`;
      const t0 = Date.now();
      await register(agent.address, id);
      await page.waitForFunction((jid: string) => jid in (window as unknown as { __seen: Record<string, number> }).__seen, id);
      const seenAt = await page.evaluate((jid: string) => (window as unknown as { __seen: Record<string, number> }).__seen[jid]!, id);
      live.push(seenAt - t0);
    }
    await ctx.close();
    const l = stats(live);
    console.log(`job registration → its row in an open jobs list: median ${l.median.toFixed(0)} ms, p95 ${l.p95.toFixed(0)} ms (goal ≤ ${GOAL_LIVE_ROW_MS} ms)`);

    mkdirSync(join(REPO_ROOT, 'bench/results'), { recursive: true });
    writeFileSync(
      join(REPO_ROOT, 'bench/results/ui.json'),
      JSON.stringify(
        {
          when: new Date().toISOString(),
          runs: n,
          assets: { ...sizes, goalKB: GOAL_ASSETS_KB },
          firstRowMs: { ...f, goal: GOAL_FIRST_ROW_MS, samples: first },
          registrationToRowMs: { ...l, goal: GOAL_LIVE_ROW_MS, samples: live },
        },
        null,
        2,
      ),
    );
  } finally {
    await browser.close();
    await agent.stop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
