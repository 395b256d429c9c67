/**
 * Vitest set-up file (every project, every test file): marks this worker as the owner of the
 * processes its file starts, and ends them when the file ends. Vitest runs this file's afterAll
 * after the test file's own (hooks run in reverse order), so a file's orderly stops come first;
 * it runs also when a test failed or timed out. The 'exit' handler is the last resort when the
 * worker exits without reaching it.
 */
import { afterAll } from 'vitest';

import { killAllChildrenNow, OWNER_ENV, stopAllChildren } from './children.ts';

process.env[OWNER_ENV] = String(process.pid);

const HOOKED = Symbol.for('plaza.test.children.exit-hook');
if (!(globalThis as Record<symbol, unknown>)[HOOKED]) {
  (globalThis as Record<symbol, unknown>)[HOOKED] = true;
  process.once('exit', () => void killAllChildrenNow());
}

afterAll(async () => {
  await stopAllChildren();
});
