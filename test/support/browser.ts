/**
 * A real browser for the console's end-to-end tests: the machine's Chromium (Debian's package, or
 * CHROMIUM_PATH), driven by playwright-core (no browser download), headless, as root without the
 * sandbox, with a new empty profile and nothing that reaches the network on its own. Pages it
 * opens record what would betray a broken page: script errors, console errors (a CSP violation
 * is one) and dialogs (an injected alert).
 *
 * No npm package brings a Chromium that runs on a machine without one (@sparticuz/chromium, made
 * for AWS Lambda, needs the NSS libraries that Debian's chromium brings), so on a machine without
 * one the browser suites skip, saying so (./requirements.ts).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { findProgram, requireProgram } from './requirements';
import { testEngine } from './test-database';

/** CHROMIUM_PATH, or Debian's chromium (or a Chrome) on PATH; undefined when there is none. */
export const CHROMIUM_PATH: string | undefined = process.env.CHROMIUM_PATH
  ? findProgram(process.env.CHROMIUM_PATH)
  : findProgram(['chromium', 'chromium-browser', 'google-chrome-stable', 'google-chrome'], ['/usr/bin']);

/** The skip option of a browser suite: false with a Chromium, else why (or a failure under REQUIRE_ALL=1). */
export function browserSkip(): string | false {
  return requireProgram(
    process.env.CHROMIUM_PATH ? `a Chromium at CHROMIUM_PATH=${process.env.CHROMIUM_PATH}` : 'Chromium',
    CHROMIUM_PATH,
    'apt-get install chromium (Debian), or set CHROMIUM_PATH to a Chromium or Chrome program',
  );
}

const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  // Names resolve to nothing (the demo pictures at images.example.com fail at once, offline);
  // the suite's own servers on 127.0.0.1 are reached as they are.
  '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1',
];

export interface LaunchOptions {
  /** Public-key hashes of certificates to trust (a test's own https server): --ignore-certificate-errors-spki-list. */
  readonly trustSpki?: readonly string[];
}

/**
 * Whether a console message is a seller's picture that failed to load: the page shows its
 * placeholder, and the failure is the image host's, not the console's. Anything of the console's
 * own origin, and every policy violation, stays a problem.
 */
function isForeignResourceFailure(text: string, url: string, pageUrl: string): boolean {
  if (!/^Failed to load resource/.test(text) || url === '') return false;
  try {
    return new URL(url).origin !== new URL(pageUrl).origin;
  } catch {
    return false;
  }
}

export const SCREENSHOT_DIR = path.join(__dirname, '..', '..', '..', 'test-results', 'console', testEngine);

export interface Browser {
  readonly context: BrowserContext;
  /** Everything that went wrong in any page: page errors, console errors, dialogs. */
  readonly problems: string[];
  newPage(viewport?: { width: number; height: number }): Promise<Page>;
  /** A full-page screenshot under test-results/console/<engine>/<name>.png. */
  screenshot(page: Page, name: string): Promise<string>;
  close(): Promise<void>;
}

export async function launchBrowser(options: LaunchOptions = {}): Promise<Browser> {
  if (!CHROMIUM_PATH) throw new Error('No Chromium: install Debian\'s package (apt-get install -y chromium) or set CHROMIUM_PATH.');
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'console-chromium-'));
  // The profile directory is the --user-data-dir: launchPersistentContext passes it to Chromium.
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    chromiumSandbox: false,
    args: options.trustSpki?.length ? [...FLAGS, `--ignore-certificate-errors-spki-list=${options.trustSpki.join(',')}`] : FLAGS,
    viewport: { width: 1280, height: 860 },
    timeout: 30_000,
  });
  // A page of the console answers in milliseconds: waiting long only hides what went wrong.
  context.setDefaultTimeout(5_000);
  const problems: string[] = [];
  fs.mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const watch = (page: Page) => {
    page.on('pageerror', (error) => problems.push(`page error on ${page.url()}: ${error.message}`));
    page.on('console', (message) => {
      if (message.type() === 'error' && !isForeignResourceFailure(message.text(), message.location().url, page.url())) problems.push(`console error on ${page.url()}: ${message.text()}`);
    });
    page.on('dialog', (dialog) => {
      problems.push(`dialog on ${page.url()}: ${dialog.message()}`);
      void dialog.dismiss();
    });
  };
  context.on('page', watch);
  for (const page of context.pages()) watch(page);
  return {
    context,
    problems,
    async newPage(viewport) {
      const page = await context.newPage();
      if (viewport) await page.setViewportSize(viewport);
      return page;
    },
    async screenshot(page, name) {
      const file = path.join(SCREENSHOT_DIR, `${name}.png`);
      await page.screenshot({ path: file, fullPage: true });
      return file;
    },
    async close() {
      await context.close();
      fs.rmSync(profile, { recursive: true, force: true });
    },
  };
}

/**
 * Form controls that no label names (no <label>, aria-label or aria-labelledby, and for a button
 * no text): what a screen reader could not read. Run in the page (the code is browser code).
 */
export function unlabelledControls(page: Page): Promise<string[]> {
  return page.evaluate<string[]>(`[...document.querySelectorAll('input:not([type=hidden]), select, textarea, button')]
    .filter((el) => !(el.labels && el.labels.length) && !el.getAttribute('aria-label') && !el.getAttribute('aria-labelledby')
      && !(el.tagName === 'BUTTON' && el.textContent.trim() !== ''))
    .map((el) => el.outerHTML.slice(0, 120))`);
}

/** Whether the page is wider than the window (a phone would have to scroll sideways). */
export function overflowsSideways(page: Page): Promise<boolean> {
  return page.evaluate<boolean>('document.documentElement.scrollWidth > window.innerWidth + 1');
}

/**
 * Waits until `expression` is true in the page, asking every 50 ms. Not page.waitForFunction:
 * playwright polls that inside the page with eval, which the console's content policy (no
 * 'unsafe-eval') refuses whenever the condition is not already true at its first look; an
 * evaluate() goes through the browser's debugging protocol, which the policy does not govern.
 */
export async function waitUntil(page: Page, expression: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await page.evaluate(expression))) {
    if (Date.now() > deadline) throw new Error(`not true within ${timeoutMs} ms: ${expression}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
