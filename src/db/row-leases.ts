import type { PrismaClient } from './generated/client.ts';

/**
 * A table whose rows are work items leased to one worker at a time: `lease_owner` and
 * `lease_until` on the row, a due-time column, an `id`. Every string here is SQL written by Plaza,
 * never input: identifiers, a constant condition, a RETURNING list over the alias `t`.
 */
export interface LeasedTable {
  /** Quoted table name (`"mcp_endpoints"`). */
  table: string;
  /** Quoted column holding when a row is next due (`"next_probe_at"`). */
  dueColumn: string;
  /** Extra condition a row must meet to be leased (`"status" IN (…)`); none when omitted. */
  workable?: string;
  /**
   * `RETURNING t."id", …`: what a claim gives back. `claimed."prior_owner"` is the lease's owner
   * before this claim (null when the row was free): another owner's means that owner's lease ran
   * out while it still held the row, so it stopped in the middle of its work.
   */
  returning: string;
}

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * Leases up to `limit` rows due at `now` that nobody holds (no lease, or an expired one: a crashed
 * owner's rows are free again) to `owner` until `now + leaseMs`, earliest due first.
 * `FOR UPDATE SKIP LOCKED`: instances claiming at once never wait on each other and never get
 * the same row.
 */
export function claimDueRows<Row>(
  prisma: PrismaClient,
  t: LeasedTable,
  owner: string,
  now: number,
  leaseMs: number,
  limit: number,
): Promise<Row[]> {
  const workable = t.workable ? `${t.workable} AND ` : '';
  return prisma.$queryRawUnsafe<Row[]>(
    `UPDATE ${t.table} t SET "lease_owner" = $1, "lease_until" = $2::timestamptz
       FROM (SELECT "id", "lease_owner" AS "prior_owner" FROM ${t.table}
              WHERE ${workable}${t.dueColumn} <= $3::timestamptz AND ("lease_until" IS NULL OR "lease_until" < $3::timestamptz)
              ORDER BY ${t.dueColumn}, "id" LIMIT $4 FOR UPDATE SKIP LOCKED) claimed
      WHERE t."id" = claimed."id" ${t.returning}`,
    owner,
    iso(now + leaseMs),
    iso(now),
    limit,
  );
}

/**
 * Leases row `id` to `owner` until `now + leaseMs` when nobody else holds it (its own lease is
 * renewed); undefined when another owner holds it or the row is not workable. `wait` waits out a
 * short row lock held by someone else (a concurrent update) and re-checks the lease as it is then;
 * without it a locked row counts as held (SKIP LOCKED).
 */
export async function claimRow<Row>(
  prisma: PrismaClient,
  t: LeasedTable,
  id: string,
  owner: string,
  now: number,
  leaseMs: number,
  wait: boolean,
): Promise<Row | undefined> {
  const workable = t.workable ? `${t.workable} AND ` : '';
  const rows = await prisma.$queryRawUnsafe<Row[]>(
    `UPDATE ${t.table} t SET "lease_owner" = $2, "lease_until" = $3::timestamptz
       FROM (SELECT "id", "lease_owner" AS "prior_owner" FROM ${t.table}
              WHERE "id" = $1 AND ${workable}("lease_until" IS NULL OR "lease_until" < $4::timestamptz OR "lease_owner" = $2)
              FOR UPDATE${wait ? '' : ' SKIP LOCKED'}) claimed
      WHERE t."id" = claimed."id" ${t.returning}`,
    id,
    owner,
    iso(now + leaseMs),
    iso(now),
  );
  return rows[0];
}
