import type { PGlite } from '@electric-sql/pglite';

import type { SqlPool } from '../sql-client.ts';

/** Plaza's raw-SQL surface over one PGlite instance (a single connection: a session is the database itself). */
export function pgliteSqlPool(db: PGlite): SqlPool {
  const sql: SqlPool = {
    query: async (text, params) => (await db.query(text, params)).rows as never,
    exec: async (text) => {
      await db.exec(text);
    },
    session: async () => ({ ...sql, release: async () => undefined }),
    // PGlite's own transaction holds its lock, so no other statement runs inside this one.
    transaction: (work, options) =>
      db.transaction(async (tx) => {
        if (options?.begin) await tx.exec(options.begin);
        return work({
          query: async (text, params) => (await tx.query(text, params)).rows as never,
          exec: async (text) => {
            await tx.exec(text);
          },
        });
      }),
  };
  return sql;
}
