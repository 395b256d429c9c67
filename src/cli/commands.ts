import { resolve } from 'node:path';

import type { Config } from '../../config/index.ts';
import { createAccountService } from '../accounts/index.ts';
import { openConfiguredDatabase } from '../app/open-database.ts';
import { migrate, pgliteDataExists } from '../db/index.ts';
import { PlazaError, systemClock } from '../kernel/index.ts';

function fail(message: string): never {
  process.stderr.write(`plaza: ${message}\n`);
  process.exit(1);
}

async function withDatabase<T>(
  config: Config,
  fn: (db: Awaited<ReturnType<typeof openConfiguredDatabase>>) => Promise<T>,
): Promise<T> {
  if (!config.databaseUrl && !config.dataDir.startsWith('memory://') && !pgliteDataExists(config.dataDir)) {
    // A command run outside the server's folder would otherwise work on a new database of its own.
    process.stderr.write(
      `plaza: no database in ${resolve(config.dataDir)} yet: creating one. A server that keeps its data elsewhere will not see it: set PLAZA_DATA_DIR (or DATABASE_URL) as the server has it.\n`,
    );
  }
  let db;
  try {
    db = await openConfiguredDatabase(config, 'command');
  } catch (error) {
    fail((error as Error).message);
  }
  try {
    return await fn(db);
  } finally {
    await db.close();
  }
}

/** `plaza migrate`: applies pending migrations and prints what it did as JSON. */
export async function runMigrate(config: Config): Promise<void> {
  const report = await withDatabase(config, (db) =>
    // A database that is not there (or refuses us) is one line, as `plaza serve` says it.
    migrate(db.sql).catch((error: unknown) =>
      fail(
        `cannot use the database (${db.description}): ${error instanceof Error ? error.message : String(error)}\nCheck DATABASE_URL (or PLAZA_DATA_DIR) and that the database is up.`,
      ),
    ),
  );
  process.stdout.write(`${JSON.stringify({ applied: report.applied, already_applied: report.alreadyApplied })}\n`);
}

/** `plaza accounts create`: prints `{account_id, api_key}`; the key is not retrievable later. */
export async function createAccount(config: Config, options: { email: string; name?: string }): Promise<void> {
  await withDatabase(config, async (db) => {
    await migrate(db.sql);
    try {
      const { account, apiKey } = await createAccountService({ prisma: db.prisma, clock: systemClock }).createAccount(
        options,
      );
      process.stdout.write(`${JSON.stringify({ account_id: account.id, email: account.email, api_key: apiKey })}\n`);
    } catch (error) {
      if (error instanceof PlazaError) fail(error.message);
      throw error;
    }
  });
}
