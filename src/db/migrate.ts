import { createHash, randomUUID } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import type { SqlPool } from './sql-client.ts';

/** Where Plaza's migrations live: Prisma's own folder format. */
export const MIGRATIONS_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'prisma', 'migrations');

/** The same advisory lock id `prisma migrate deploy` takes, so the two never run at once. */
const PRISMA_MIGRATE_LOCK = 72707369;

const CREATE_TABLE = `CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
    "id"                    VARCHAR(36) PRIMARY KEY NOT NULL,
    "checksum"              VARCHAR(64) NOT NULL,
    "finished_at"           TIMESTAMPTZ,
    "migration_name"        VARCHAR(255) NOT NULL,
    "logs"                  TEXT,
    "rolled_back_at"        TIMESTAMPTZ,
    "started_at"            TIMESTAMPTZ NOT NULL DEFAULT now(),
    "applied_steps_count"   INTEGER NOT NULL DEFAULT 0
)`;

/** One migration folder. */
export interface Migration {
  name: string;
  sql: string;
  /** sha256 hex of migration.sql, as Prisma computes it. */
  checksum: string;
}

/** What a migration run did. */
export interface MigrationReport {
  applied: string[];
  alreadyApplied: string[];
}

/** A migration's recorded state disagrees with the files (edited after apply, or a failed run). */
export class MigrationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MigrationError';
  }
}

/** Reads the migration folders in order. */
export function readMigrations(dir: string = MIGRATIONS_DIR): Migration[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(join(dir, d.name, 'migration.sql')))
    .map((d) => d.name)
    .sort()
    .map((name) => {
      const sql = readFileSync(join(dir, name, 'migration.sql'), 'utf8');
      return { name, sql, checksum: createHash('sha256').update(sql).digest('hex') };
    });
}

interface AppliedRow {
  migration_name: string;
  checksum: string;
  finished_at: unknown;
  rolled_back_at: unknown;
}

/**
 * Applies pending migrations, each in its own transaction, recording them in `_prisma_migrations`
 * exactly as `prisma migrate deploy` does, so either tool can take over. Idempotent and safe to run
 * from several instances at once (Prisma's advisory lock).
 */
export async function migrate(pool: SqlPool, migrations: Migration[] = readMigrations()): Promise<MigrationReport> {
  const session = await pool.session();
  try {
    await session.query('SELECT pg_advisory_lock($1)', [PRISMA_MIGRATE_LOCK]);
    try {
      await session.exec(CREATE_TABLE);
      const rows = await session.query<AppliedRow>(
        'SELECT migration_name, checksum, finished_at, rolled_back_at FROM "_prisma_migrations"',
      );
      const applied = new Map<string, AppliedRow>();
      for (const row of rows) {
        if (row.rolled_back_at !== null) continue;
        if (row.finished_at === null) {
          throw new MigrationError(
            `Migration ${row.migration_name} started but did not finish; fix the database and mark it rolled back before retrying.`,
          );
        }
        applied.set(row.migration_name, row);
      }
      const report: MigrationReport = { applied: [], alreadyApplied: [] };
      for (const migration of migrations) {
        const done = applied.get(migration.name);
        if (done) {
          if (done.checksum !== migration.checksum) {
            throw new MigrationError(
              `Migration ${migration.name} was modified after it was applied (checksum differs).`,
            );
          }
          report.alreadyApplied.push(migration.name);
          continue;
        }
        await session.exec('BEGIN');
        try {
          await session.exec(migration.sql);
          await session.query(
            `INSERT INTO "_prisma_migrations" (id, checksum, finished_at, migration_name, logs, rolled_back_at, started_at, applied_steps_count)
             VALUES ($1, $2, now(), $3, NULL, NULL, now(), 1)`,
            [randomUUID(), migration.checksum, migration.name],
          );
          await session.exec('COMMIT');
        } catch (error) {
          await session.exec('ROLLBACK').catch(() => undefined);
          throw new MigrationError(`Migration ${migration.name} failed: ${(error as Error).message}`);
        }
        report.applied.push(migration.name);
      }
      return report;
    } finally {
      await session.query('SELECT pg_advisory_unlock($1)', [PRISMA_MIGRATE_LOCK]).catch(() => undefined);
    }
  } finally {
    await session.release();
  }
}
