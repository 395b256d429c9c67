import type { TaskDirectory } from '../../gateway/index.ts';
import type { Database } from '../db/index.ts';
import type { Clock } from '../kernel/index.ts';

/** How long a task's call is remembered: past any task's time to live that providers give (MCP suggests hours). */
const KEEP_MS = 7 * 24 * 60 * 60 * 1000;
/** One write in this many also deletes the rows past KEEP_MS. */
const SWEEP_EVERY = 100;

/**
 * The gateway's memory of task-augmented calls (MCP tasks), in the `gateway_tasks` table that
 * every instance shares: the result a caller fetches with `tasks/result` is stamped with its
 * call's id, and receipted under the call's tool, by whichever instance the request reaches.
 */
export function createTaskDirectory(options: { db: Pick<Database, 'sql'>; clock: Clock }): TaskDirectory {
  const { db, clock } = options;
  let writes = 0;
  return {
    async remember(key, task) {
      await db.sql.query(
        `INSERT INTO "gateway_tasks" ("key", "call_id", "tool", "created_at") VALUES ($1, $2, $3, $4::timestamptz) ON CONFLICT ("key") DO NOTHING`,
        [key, task.callId, task.tool, new Date(clock.now()).toISOString()],
      );
      if (++writes % SWEEP_EVERY === 0)
        await db.sql.query(`DELETE FROM "gateway_tasks" WHERE "created_at" < $1::timestamptz`, [
          new Date(clock.now() - KEEP_MS).toISOString(),
        ]);
    },
    async callsOf(keys) {
      const rows = await db.sql.query<{ key: string; call_id: string; tool: string | null }>(
        `SELECT "key", "call_id", "tool" FROM "gateway_tasks" WHERE "key" = ANY($1::text[])`,
        [keys],
      );
      // A task remembered before tools were (2026-11-25) is receipted under its method's name.
      return new Map(rows.map((row) => [row.key, { callId: row.call_id, tool: row.tool ?? 'tasks/result' }]));
    },
  };
}
