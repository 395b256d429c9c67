/**
 * Test databases: a fresh in-memory PGlite (from the cached template, ~1 s) or a fresh database
 * on the PostgreSQL server named by TEST_DATABASE_URL, dropped again by `dispose`.
 */
import pg from 'pg';

import { type Database, migrate, openDatabase } from '../../src/db/index.ts';
import { randomToken } from '../../src/kernel/index.ts';

/** The storage backends a suite runs on: PGlite always, PostgreSQL when TEST_DATABASE_URL is set. */
export type Backend = 'pglite' | 'postgres';

export const BACKENDS: Backend[] = process.env['TEST_DATABASE_URL'] ? ['pglite', 'postgres'] : ['pglite'];

/** A migrated, empty database for one test file, with its URL when it is PostgreSQL. */
export interface TestDatabase {
  db: Database;
  url: string | undefined;
  dispose(): Promise<void>;
}

/**
 * Creates an empty PostgreSQL database on the server of `base` (default TEST_DATABASE_URL);
 * returns its URL and a drop. Benchmarks use it too, with their own prefix.
 */
export async function createPostgresDatabase(
  base: string | undefined = process.env['TEST_DATABASE_URL'],
  prefix = 'plaza_test',
): Promise<{ url: string; drop(): Promise<void> }> {
  if (!base) throw new Error('TEST_DATABASE_URL is not set');
  const name = `${prefix}_${randomToken(6)}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${name}"`);
  await admin.end();
  const url = new URL(base);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const client = new pg.Client({ connectionString: base });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await client.end();
    },
  };
}

/** A fresh migrated database on `backend`. */
export async function createTestDatabase(backend: Backend, options: { migrate?: boolean } = {}): Promise<TestDatabase> {
  if (backend === 'pglite') {
    const db = await openDatabase({ kind: 'pglite', dataDir: 'memory://' });
    if (options.migrate !== false) await migrate(db.sql);
    return { db, url: undefined, dispose: () => db.close() };
  }
  const created = await createPostgresDatabase();
  const db = await openDatabase({ kind: 'postgres', url: created.url, poolMax: 5 });
  if (options.migrate !== false) await migrate(db.sql);
  return {
    db,
    url: created.url,
    async dispose() {
      await db.close();
      await created.drop();
    },
  };
}
