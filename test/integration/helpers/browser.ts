/**
 * Debian's Chromium driven by playwright-core for the UI tests: a fresh profile per browser,
 * the flags that work on these machines (no GPU, no sandbox as root, no network chatter), and
 * screenshots written under test-results/ui/ as artifacts. No browser is downloaded: a missing
 * /usr/bin/chromium fails the test with the reason (`apt-get install chromium`).
 */
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { REPO_ROOT } from './agent-process.js';

export const CHROMIUM_PATH = process.env.CARAVAN_CHROMIUM ?? '/usr/bin/chromium';

/** Where screenshots go. */
export const SCREENSHOT_DIR = join(REPO_ROOT, 'test-results', 'ui');

export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** A running browser with its own profile directory. */
export interface TestBrowser {
  context: BrowserContext;
  newPage(): Promise<Page>;
  close(): Promise<void>;
}

/** Launches Chromium with a fresh user-data-dir; throws with the reason when it is not installed. */
export async function launchBrowser(): Promise<TestBrowser> {
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(`${CHROMIUM_PATH} not found: the UI tests need Debian's Chromium (apt-get install chromium)`);
  }
  const profile = await mkdtemp(join(tmpdir(), 'caravan-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: { width: 1280, height: 800 },
  });
  return {
    context,
    newPage: () => context.newPage(),
    async close() {
      await context.close().catch(() => {});
      await rm(profile, { recursive: true, force: true });
    },
  };
}

/** Writes a full-page screenshot as a test artifact. */
export async function screenshot(page: Page, name: string): Promise<string> {
  await mkdir(SCREENSHOT_DIR, { recursive: true });
  const path = join(SCREENSHOT_DIR, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}
