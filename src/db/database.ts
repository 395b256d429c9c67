import { existsSync } from 'node:fs';
import { join } from 'node:path';

import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';

import { PrismaClient } from './generated/client.ts';
import type { SqlPool, SqlSession } from './sql-client.ts';

/** Where the data lives. */
export type DatabaseTarget =
  /** PostgreSQL (production, CI, several instances). */
  | { kind: 'postgres'; url: string; poolMax?: number }
  /**
   * Embedded PGlite in a folder (or `memory://`). `owner: true` takes the folder's lock and serves
   * the database on a local socket so `plaza` commands can reach it while the server runs.
   */
  | { kind: 'pglite'; dataDir: string; owner?: boolean };

/** An open database: Prisma for the domain, raw SQL for migrations, leases and pings. */
export interface Database {
  readonly kind: 'pglite' | 'postgres';
  readonly prisma: PrismaClient;
  readonly sql: SqlPool;
  /** Where it is, for logs (never a password). */
  readonly description: string;
  /** Resolves when the database answers a trivial query. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** The unix-socket folder `plaza` commands connect to while a server owns an embedded database. */
export function pgliteSocketDir(dataDir: string): string {
  return join(dataDir, 'run');
}

export const SOCKET_NAME = '.s.PGSQL.5432';
/** The folder inside a data folder that holds the embedded database's files. */
export const PGLITE_DATA_FOLDER = 'pgdata';

/** Opens the database described by `target`. */
export async function openDatabase(target: DatabaseTarget): Promise<Database> {
  if (target.kind === 'postgres') return openPostgres(target.url, target.poolMax);
  // Loaded only for embedded storage: on PostgreSQL the process never holds PGlite's code (~6 MB).
  const { openPglite } = await import('./pglite-database.ts');
  return openPglite(target.dataDir, target.owner ?? false);
}

async function openPostgres(url: string, poolMax = 10): Promise<Database> {
  const pool = new pg.Pool({ connectionString: url, max: poolMax, connectionTimeoutMillis: 5_000 });
  // An idle client losing its server (restart, failover) must not crash the process.
  pool.on('error', () => undefined);
  const prisma = new PrismaClient({ adapter: new PrismaPg(pool) });
  const sql: SqlPool = {
    query: async (text, params) => (await pool.query(text, params)).rows,
    exec: async (text) => {
      await pool.query(text);
    },
    // A simple query of several statements is one implicit transaction, rolled back whole when
    // one fails; the client goes back to the pool outside any transaction either way.
    script: async (text) => {
      const results = (await pool.query(text)) as pg.QueryResult | pg.QueryResult[];
      return (Array.isArray(results) ? results.at(-1)?.rows : results.rows) ?? [];
    },
    session: async (): Promise<SqlSession> => {
      const client = await pool.connect();
      // A borrowed client whose server goes away emits 'error'; without a listener that crashes
      // the process. The failing query still rejects, which is what callers act on.
      const onError = () => undefined;
      client.on('error', onError);
      return {
        query: async (text, params) => (await client.query(text, params)).rows,
        exec: async (text) => {
          await client.query(text);
        },
        release: async () => {
          client.off('error', onError);
          client.release();
        },
      };
    },
    transaction: async (work, options) => {
      const client = await pool.connect();
      const onError = () => undefined;
      client.on('error', onError);
      let broken: Error | undefined;
      let committed = false;
      try {
        // The simple query protocol takes several statements in one round trip.
        const begun = await client.query(options?.begin ? `BEGIN; ${options.begin}` : 'BEGIN');
        const results: pg.QueryResult[] = Array.isArray(begun) ? begun : [begun];
        const result = await work({
          begun: options?.begin ? (results.at(-1)?.rows ?? []) : [],
          query: async (text, params) => (await client.query(text, params)).rows,
          exec: async (text) => {
            await client.query(text);
          },
          commitWith: async (script) => {
            await client.query(`${script}; COMMIT`);
            committed = true;
          },
        });
        if (!committed) await client.query('COMMIT');
        return result;
      } catch (error) {
        await client.query('ROLLBACK').catch((e: unknown) => {
          // A connection that cannot even roll back is not given back to the pool.
          broken = e instanceof Error ? e : new Error(String(e));
        });
        throw error;
      } finally {
        client.off('error', onError);
        client.release(broken);
      }
    },
  };
  const safe = new URL(url);
  safe.password = '';
  return {
    kind: 'postgres',
    prisma,
    sql,
    description: `postgresql ${safe.host || safe.searchParams.get('host') || 'localhost'}${safe.pathname}`,
    ping: async () => {
      await pool.query('SELECT 1');
    },
    close: async () => {
      await prisma.$disconnect().catch(() => undefined);
      await pool.end().catch(() => undefined);
    },
  };
}

/** The connection string of the socket a server serves its embedded database on. */
export function pgliteSocketUrl(dataDir: string): string {
  return `postgresql://postgres@localhost/postgres?host=${encodeURIComponent(pgliteSocketDir(dataDir))}`;
}

/** True when a server is serving `dataDir`'s database on its local socket. */
export function pgliteSocketExists(dataDir: string): boolean {
  return existsSync(join(pgliteSocketDir(dataDir), SOCKET_NAME));
}

/** True when `dataDir` already holds an embedded database (its PostgreSQL folder). */
export function pgliteDataExists(dataDir: string): boolean {
  return existsSync(join(dataDir, PGLITE_DATA_FOLDER));
}
