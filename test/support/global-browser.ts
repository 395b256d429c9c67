/**
 * Vitest global set-up of the `browser` project (runs only when browser files are selected): looks
 * for Chromium once and provides its path to the files (`chromiumPath`, null when there is none).
 * Without one the browser suites are skipped (test/support/browser.ts, describeWithBrowser) and
 * one line at the end of the run says which, why and how to enable them; with
 * PLAZA_TEST_REQUIRE_BROWSER=1 (CI) a missing Chromium fails the run at once instead.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

import type { TestProject } from 'vitest/node';

import { CHROMIUM_CANDIDATES, ENABLE_BROWSER_HINT, findChromium, REQUIRE_BROWSER_ENV } from './chromium-path.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Chromium's executable for the browser tests, or null when none was found (the suites are skipped). */
    chromiumPath: string | null;
  }
}

const BROWSER_DIR = join(import.meta.dirname, '..', 'browser');

export default function setup(project: TestProject): (() => void) | undefined {
  const found = findChromium();
  const missing = `no Chromium at ${CHROMIUM_CANDIDATES.join(' or ')}`;
  if (!found && process.env[REQUIRE_BROWSER_ENV] === '1') {
    throw new Error(`${REQUIRE_BROWSER_ENV}=1 and ${missing}: the browser suites cannot run (${ENABLE_BROWSER_HINT})`);
  }
  project.provide('chromiumPath', found ?? null);
  if (found) return undefined;
  const files = readdirSync(BROWSER_DIR).filter((f) => f.endsWith('.test.ts'));
  // At the end of the run, next to the summary, where it is read.
  return () =>
    console.log(
      `\nBrowser tests skipped (the Chromium suites of test/browser: ${files.map((f) => f.replace(/\.test\.ts$/, '')).join(', ')}): ${missing}. To run them: ${ENABLE_BROWSER_HINT}.\n`,
    );
}
