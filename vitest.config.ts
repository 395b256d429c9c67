import { defineConfig } from 'vitest/config';

// Two projects: `unit` (pure code, fast) and `integration` (in-process HTTP against PGlite, and
// PostgreSQL/Redis when TEST_DATABASE_URL / TEST_REDIS_URL are set).
export default defineConfig({
  test: {
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
    ],
  },
});
