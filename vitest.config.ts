import { enableCompileCache } from 'node:module';
import { join } from 'node:path';

import { defineConfig } from 'vitest/config';

import { TEST_NODE_ARGS } from './test/support/node-flags.ts';

// Node's compile cache (V8 code cache on disk) for this process and, through the environment,
// for every Node process the tests start: Vitest's forks, `plaza` children, server-everything.
// Each of them loads the same large module graph (Express, Prisma, PGlite, the MCP SDK); with the
// cache they skip most of its parsing and compiling. NODE_COMPILE_CACHE set by the caller wins;
// NODE_DISABLE_COMPILE_CACHE=1 turns it off. Measured in bench/README.md ("the test suite's CPU").
process.env['NODE_COMPILE_CACHE'] ??= join(
  import.meta.dirname,
  'node_modules',
  '.cache',
  'plaza',
  'node-compile-cache',
);
enableCompileCache(process.env['NODE_COMPILE_CACHE']);

// Three projects: `unit` (pure code, fast), `integration` (in-process HTTP against PGlite, and
// PostgreSQL/Redis when TEST_DATABASE_URL / TEST_REDIS_URL are set) and `browser` (pages in Chromium).
export default defineConfig({
  test: {
    // One temporary folder per run, removed at its end (test/support/global-tmp.ts); the run fails
    // when a process it started outlives it (test/support/global-leftovers.ts).
    globalSetup: ['test/support/global-leftovers.ts', 'test/support/global-tmp.ts'],
    // Every test file ends the processes it started, also after a failure or a timeout.
    setupFiles: ['test/support/children-setup.ts'],
    // Two files at a time on these 2-core machines (Vitest's default leaves one core idle): most
    // tests wait on child processes, sockets and databases, not on their own CPU.
    maxWorkers: 2,
    projects: [
      {
        // Some pure tests are CPU-heavy (a 100,000-entry archive); shared CI machines need headroom.
        test: { name: 'unit', include: ['test/unit/**/*.test.ts'], environment: 'node', testTimeout: 30_000 },
      },
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts', 'test/e2e/**/*.test.ts'],
          environment: 'node',
          testTimeout: 60_000,
          hookTimeout: 120_000,
          pool: 'forks',
          // `--liftoff-only` (test/support/node-flags.ts): each fork opens several short-lived PGlites.
          execArgv: TEST_NODE_ARGS,
        },
      },
      {
        // Real Chromium (Debian's headless shell, test/support/browser.ts) against a real Plaza; one browser per file.
        // Skipped with one line at the end when there is no Chromium, a failure with
        // PLAZA_TEST_REQUIRE_BROWSER=1 (test/support/global-browser.ts).
        test: {
          name: 'browser',
          globalSetup: ['test/support/global-browser.ts'],
          include: ['test/browser/**/*.test.ts'],
          environment: 'node',
          testTimeout: 60_000,
          hookTimeout: 120_000,
          pool: 'forks',
          // `--liftoff-only` (test/support/node-flags.ts): each fork opens several short-lived PGlites.
          execArgv: TEST_NODE_ARGS,
        },
      },
    ],
  },
});
