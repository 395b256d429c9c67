/**
 * An in-process Plaza for integration tests: a fresh database on the chosen backend, the real app
 * on an ephemeral port, its log lines captured in memory.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';

import { type Config, loadConfig } from '../../config/index.ts';
import { createPlaza } from '../../src/app/create-app.ts';
import { type RunningServer, startServer } from '../../src/app/server.ts';
import type { Database } from '../../src/db/index.ts';
import { type Clock, systemClock } from '../../src/kernel/index.ts';
import { createLogger, type Logger } from '../../src/log/index.ts';
import type { Marketplace } from '../../src/marketplace/index.ts';
import { type Backend, createTestDatabase } from './databases.ts';
import { TEST_LIMITS } from './test-limits.ts';

/** A running test instance. */
export interface TestPlaza {
  url: string;
  db: Database;
  config: Config;
  log: Logger;
  marketplace: Marketplace;
  /** The gateway's count of answer bytes held for clients that have not read them (in all, or one agent's). */
  heldAnswerBytes(agentId?: string): number;
  /** Every JSON log line written so far. */
  logLines(): string[];
  close(): Promise<void>;
}

/** Starts Plaza on `backend` with extra environment settings. */
export async function startTestPlaza(
  backend: Backend,
  options: { env?: Record<string, string>; clock?: Clock; db?: Database; port?: number } = {},
): Promise<TestPlaza> {
  const owned = options.db ? undefined : await createTestDatabase(backend);
  const db = options.db ?? owned!.db;
  // Each instance gets its own data folder, so receipt spools never mix between tests.
  const dataDir = mkdtempSync(join(tmpdir(), 'plaza-test-'));
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'debug',
    PLAZA_DATA_DIR: dataDir,
    MCP_REGISTRY_URL: 'off',
    ...TEST_LIMITS,
    ...options.env,
  });
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      callback();
    },
  });
  const log = createLogger({ level: config.logLevel, destination });
  const plaza = createPlaza({ config, db, log, clock: options.clock ?? systemClock });
  // A fixed port when PUBLIC_BASE_URL must name it (an OAuth issuer is compared exactly).
  const server: RunningServer = await startServer(plaza.handler, { port: options.port ?? 0, host: '127.0.0.1', log });
  return {
    url: server.url,
    db,
    config,
    log,
    marketplace: plaza.marketplace,
    heldAnswerBytes: (agentId) => plaza.heldAnswerBytes(agentId),
    logLines: () => [...lines],
    async close() {
      await server.stop(1_000);
      await plaza.close();
      await owned?.dispose();
    },
  };
}
