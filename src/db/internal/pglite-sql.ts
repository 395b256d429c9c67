import type { PGlite } from '@electric-sql/pglite';

import type { SqlPool } from '../sql-client.ts';

/** Plaza's raw-SQL surface over one PGlite instance (a single connection: a session is the database itself). */
export function pgliteSqlPool(db: PGlite): SqlPool {
  const sql: SqlPool = {
    query: async (text, params) => (await db.query(text, params)).rows as never,
    exec: async (text) => {
      await db.exec(text);
    },
    // PGlite's exec is the simple query protocol too: several statements, one implicit transaction.
    script: async (text) => ((await db.exec(text)).at(-1)?.rows ?? []) as Record<string, unknown>[],
    session: async () => ({ ...sql, release: async () => undefined }),
    // PGlite's own transaction holds its lock, so no other statement runs inside this one. It
    // commits when `work` resolves, so commitWith only runs its script.
    transaction: (work, options) =>
      db.transaction(async (tx) => {
        const begun = options?.begin ? await tx.exec(options.begin) : [];
        return work({
          begun: (begun.at(-1)?.rows ?? []) as Record<string, unknown>[],
          query: async (text, params) => (await tx.query(text, params)).rows as never,
          exec: async (text) => {
            await tx.exec(text);
          },
          commitWith: async (script) => {
            await tx.exec(script);
          },
        });
      }),
  };
  return sql;
}
