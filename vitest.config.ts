import { defineConfig } from 'vitest/config';

// Three projects: `unit` (pure code, fast), `integration` (in-process HTTP against PGlite, and
// PostgreSQL/Redis when TEST_DATABASE_URL / TEST_REDIS_URL are set) and `browser` (pages in Chromium).
export default defineConfig({
  test: {
    // One temporary folder per run, removed at its end (test/support/global-tmp.ts).
    globalSetup: ['test/support/global-tmp.ts'],
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
        },
      },
      {
        // Real Chromium (Debian's headless shell, test/support/browser.ts) against a real Plaza; one browser per file.
        test: {
          name: 'browser',
          include: ['test/browser/**/*.test.ts'],
          environment: 'node',
          testTimeout: 60_000,
          hookTimeout: 120_000,
          pool: 'forks',
        },
      },
    ],
  },
});
