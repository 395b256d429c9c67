/**
 * Real Chromium for page tests: Debian's Chromium headless shell driven by playwright-core, an axe-core
 * scan that runs inside the page, and optional screenshots into docs/screenshots.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { describe, inject } from 'vitest';

const require = createRequire(import.meta.url);

/**
 * Chromium's executable for this run, found once by the browser project's global set-up
 * (test/support/global-browser.ts, test/support/chromium-path.ts); null when there is none.
 */
export const CHROMIUM_PATH: string | null = inject('chromiumPath') ?? null;

/**
 * `describe` for browser suites: skipped when the run has no Chromium (the global set-up then says
 * so in one line at the end). A file's top-level hooks do not run when all its tests are skipped.
 */
export const describeWithBrowser = describe.skipIf(CHROMIUM_PATH === null);

/** One headless Chromium for a test file. */
export function launchChromium(): Promise<Browser> {
  if (CHROMIUM_PATH === null)
    throw new Error('no Chromium for this run: use describeWithBrowser (test/support/global-browser.ts)');
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
}

/** Desktop and phone viewports used by the tests and screenshots. */
export const DESKTOP = { width: 1280, height: 900 };
export const PHONE = { width: 375, height: 740 };

const AXE_SOURCE = readFileSync(join(require.resolve('axe-core/axe.min.js')), 'utf8');

/** A violation axe-core reports (the fields the tests print). */
export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[]; html: string }[];
}

/**
 * Runs axe-core (WCAG 2.x A/AA rules) in the page and returns its serious and critical
 * violations. The script is evaluated through the DevTools protocol, which the page's CSP does not
 * govern, so the page keeps its real policy during the scan.
 */
export async function seriousViolations(page: Page): Promise<AxeViolation[]> {
  await page.evaluate(AXE_SOURCE);
  // Page functions are passed as source text: the test program is type-checked without DOM types.
  const violations = await page.evaluate<AxeViolation[]>(`(async () => {
    const result = await axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] } });
    return result.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.slice(0, 3).map((n) => ({ target: n.target, html: n.html.slice(0, 200) })) }));
  })()`);
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
}

/**
 * Saves a full-page screenshot to docs/screenshots/<name>.png when PLAZA_SCREENSHOTS=1 (so an
 * ordinary test run does not rewrite committed images).
 */
export async function screenshot(page: Page, name: string): Promise<void> {
  if (process.env['PLAZA_SCREENSHOTS'] !== '1') return;
  await page.screenshot({
    path: join(import.meta.dirname, '..', '..', 'docs', 'screenshots', `${name}.png`),
    fullPage: true,
  });
}

/** Whether the page is wider than its viewport (content cut off or scrolling sideways on phones). */
export function overflowsHorizontally(page: Page): Promise<boolean> {
  return page.evaluate<boolean>('document.documentElement.scrollWidth > document.documentElement.clientWidth + 1');
}

/**
 * How the rows of a table (`rows`: a selector) are laid out: the most lines any `code` in them
 * takes (a column squeezed to a letter a line shows as many), and the labels (`data-label`, else
 * the text) of cells that end past their scrolling wrapper's right edge (off screen on a phone).
 */
export function tableLayout(page: Page, rows: string): Promise<{ codeLines: number; cutOff: string[] }> {
  // Page functions are source text: the test program is type-checked without DOM types.
  return page.evaluate<{ codeLines: number; cutOff: string[] }>(`(() => {
    let codeLines = 0;
    const cutOff = [];
    for (const row of document.querySelectorAll(${JSON.stringify(rows)})) {
      const right = (row.closest('.table-wrap') || document.documentElement).getBoundingClientRect().right;
      for (const code of row.querySelectorAll('code')) {
        const lines = Math.round(code.getBoundingClientRect().height / parseFloat(getComputedStyle(code).lineHeight));
        codeLines = Math.max(codeLines, lines);
      }
      for (const cell of row.children)
        if (cell.getBoundingClientRect().right > right + 1) cutOff.push(cell.dataset.label || cell.textContent);
    }
    return { codeLines, cutOff };
  })()`);
}

/** Fails on script errors and CSP violations the page reports to the console. */
export function collectPageErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  page.on('console', (message) => {
    if (message.type() === 'error' && !/Failed to load resource/.test(message.text())) errors.push(message.text());
  });
  return errors;
}

/** The id of the focused element. */
export function focusedId(page: Page): Promise<string | undefined> {
  return page.evaluate<string | undefined>('document.activeElement?.id');
}

/**
 * Waits until `expression` (page source text) is truthy. Polls from the test through the DevTools
 * protocol: `page.waitForFunction` evaluates strings inside the page, which the strict CSP (no
 * 'unsafe-eval') rightly refuses.
 */
export async function waitUntil(page: Page, expression: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await page.evaluate(expression))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${expression}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * A new desktop page in a new context for each test (the previous context closed), with the page
 * errors it collects.
 */
export async function freshPage(
  browser: Browser,
  previous: BrowserContext | undefined,
): Promise<{ context: BrowserContext; page: Page; errors: string[] }> {
  await previous?.close();
  const context = await browser.newContext({ viewport: DESKTOP, locale: 'en-US' });
  const page = await context.newPage();
  return { context, page, errors: collectPageErrors(page) };
}
