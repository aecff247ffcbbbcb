/**
 * The operator console in tests: its real build (Vite, into dist/console/, rebuilt when a
 * console source is newer) and a real Chromium driven by playwright-core (Debian's package at
 * /usr/bin/chromium; `.ci/run` installs it when missing).
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Browser, chromium, type Page } from 'playwright-core';

const root = fileURLToPath(new URL('../../', import.meta.url));
export const CONSOLE_DIST = join(root, 'dist/console');
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

function newest(path: string): number {
  const st = statSync(path);
  if (!st.isDirectory()) return st.mtimeMs;
  return Math.max(st.mtimeMs, ...readdirSync(path).map((e) => newest(join(path, e))));
}

/** Builds the console unless dist/console/ is newer than every console source and operation document. */
export function ensureConsoleBuilt(): void {
  const index = join(CONSOLE_DIST, 'index.html');
  const sources = Math.max(newest(join(root, 'console')), newest(join(root, 'schemas/operations')));
  if (existsSync(index) && statSync(index).mtimeMs >= sources) return;
  const vite = join(dirname(createRequire(import.meta.url).resolve('vite/package.json')), 'bin/vite.js');
  const out = spawnSync(
    process.execPath,
    [vite, 'build', '--config', join(root, 'console/vite.config.ts'), '--logLevel', 'warn'],
    { cwd: root, encoding: 'utf8' },
  );
  if (out.status !== 0) throw new Error(`console build failed:\n${out.stdout}\n${out.stderr}`);
}

/**
 * The built console copied to a directory of this test's own (served with CONSOLE_DIR), so a
 * rebuild of dist/ by another test file (the image test runs ensure-build) cannot empty it
 * under a page that is loading.
 */
export function consoleCopy(): string {
  ensureConsoleBuilt();
  const dir = mkdtempSync(join(tmpdir(), 'ac-console-build-'));
  cpSync(CONSOLE_DIST, dir, { recursive: true });
  return dir;
}

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM))
    throw new Error(
      `${CHROMIUM} is missing: install Debian's chromium package (apt-get install -y chromium)`,
    );
  // --no-sandbox: CI runs as root, where Chromium's sandbox cannot start.
  return chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu'] });
}

let workerBrowser: Promise<Browser> | undefined;

/**
 * This vitest worker's Chromium: launched by the first browser test file the worker runs and
 * kept for the next ones (the main project's files share their worker's modules, and a worker
 * runs one file at a time: vitest.config.ts), as Playwright Test keeps one browser per worker.
 * What a test sees of the browser is its own context (cookies, storage, pages), which it opens
 * and closes; releaseChromium closes any a file left open. A launch took ~2.3 s of CPU
 * (launch, one page, close: 3.3 s against 1.0 s for loading playwright-core alone), once per
 * browser file before. playwright-core kills the browser when the worker exits; one that is
 * no longer connected (crashed) is launched again.
 */
export async function workerChromium(): Promise<Browser> {
  const current = await workerBrowser?.catch(() => undefined);
  if (current?.isConnected()) return current;
  workerBrowser = launchChromium();
  return workerBrowser;
}

/** The end of a file's use of workerChromium: the contexts it left open are closed, the browser kept. */
export async function releaseChromium(browser: Browser | undefined): Promise<void> {
  if (!browser?.isConnected()) return;
  await Promise.all(browser.contexts().map((c) => c.close()));
}

/**
 * Signs in to the console at `baseUrl` the way an operator does: with `token` pasted into the
 * sign-in form, or without one by the development token's button. Resolves on the Agents page,
 * the one a sign-in lands on.
 */
export async function signIn(page: Page, baseUrl: string, token?: string): Promise<void> {
  await page.goto(`${baseUrl}/console/`);
  if (token) {
    await page.getByLabel('Operator bearer token').fill(token);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  } else {
    await page.getByRole('button', { name: 'Sign in with a development token' }).click();
  }
  await page.getByRole('heading', { name: 'Agents', level: 1 }).waitFor();
}

/** How far the page scrolls sideways (pixels past the viewport's width): 0 or less when it fits. */
export const sidewaysScroll = (page: Page): Promise<number> =>
  page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth');

/** Signs in (signIn), then follows the navigation's link to the page `link` and waits for its heading. */
export async function openConsolePage(
  page: Page,
  baseUrl: string,
  link: string,
  token?: string,
): Promise<void> {
  await signIn(page, baseUrl, token);
  if (link === 'Agents') return;
  await page.getByRole('link', { name: link, exact: true }).click();
  await page.getByRole('heading', { name: link, level: 1 }).waitFor();
}
