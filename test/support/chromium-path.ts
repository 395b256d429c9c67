/**
 * Where the browser tests find Chromium, and what to tell someone who has none. Read by the
 * browser project's global set-up (test/support/global-browser.ts) and by the launch helper.
 */
import { accessSync, constants } from 'node:fs';

/**
 * Debian's Chromium: its headless shell (package `chromium-headless-shell`: the same Blink build
 * without the full browser's extra processes, about a third less wall time for the browser files)
 * when installed, else the full browser. `.ci/run` installs the shell; `CHROMIUM_PATH` overrides.
 */
export const CHROMIUM_CANDIDATES: readonly string[] = process.env['CHROMIUM_PATH']
  ? [process.env['CHROMIUM_PATH']]
  : ['/usr/bin/chromium-headless-shell', '/usr/bin/chromium'];

/** Set to 1 (CI does) to make a missing Chromium fail the run instead of skipping the browser suites. */
export const REQUIRE_BROWSER_ENV = 'PLAZA_TEST_REQUIRE_BROWSER';

/** What to do to run the browser suites. */
export const ENABLE_BROWSER_HINT = 'apt-get install chromium-headless-shell, or set CHROMIUM_PATH=/path/to/chromium';

/** The first candidate that is an executable file, or undefined. */
export function findChromium(): string | undefined {
  return CHROMIUM_CANDIDATES.find((path) => {
    try {
      accessSync(path, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}
