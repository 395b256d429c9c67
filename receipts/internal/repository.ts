/**
 * The receipts data layer: the one place that speaks SQL about `receipts`, `receipt_checkpoints`
 * and the checkpoint lease in `job_leases`. Returns domain types, never Prisma rows.
 */
import type { PrismaClient, SqlPool } from '../../src/db/index.ts';
import type { Checkpoint } from '../checkpoint.ts';
import { chainHash, GENESIS_HASH, type Receipt, type ReceiptInput, receiptLeafHash, type ReceiptStatus } from '../encoding.ts';

/** The database the receipts module needs (PGlite or PostgreSQL); a `Database` fits. */
export interface ReceiptsDatabase {
  prisma: PrismaClient;
  /** Raw SQL transactions for the hot path (appending receipts). */
  sql: Pick<SqlPool, 'transaction'>;
}

/** Filters of a receipt listing; all optional except the account. */
export interface ReceiptFilter {
  accountId: string;
  aginId?: string;
  tool?: string;
  provider?: string;
  status?: ReceiptStatus;
  since?: Date;
  until?: Date;
  /** Only receipts after this seq (cursor). */
  afterSeq?: bigint;
}

interface ReceiptRow {
  seq: string;
  call_id: string;
  agin_id: string;
  agent_principal: string;
  account_id: string | null;
  tool: string;
  provider: string;
  status: string;
  outcome: string;
  latency_ms: number;
  result_digest: string;
  created_at: Date | string;
  prev_hash: string | null;
  leaf_hash: string | null;
}

const COLUMNS = `"seq"::text AS seq, "call_id", "agin_id", "agent_principal", "account_id", "tool", "provider", "status", "outcome",
  "latency_ms", "result_digest", "created_at", "prev_hash", "leaf_hash"`;

/** Serialises appenders across every instance; the lock ends with the transaction. */
const CHAIN_LOCK = `SELECT pg_advisory_xact_lock(hashtext('plaza.receipts.chain'))`;

type Query = (text: string, params: unknown[]) => Promise<Record<string, unknown>[]>;

/**
 * Runs `work` in one transaction holding the chain lock. A raw SQL transaction, not Prisma's
 * interactive one: a receipt commit is on the path of every sync tools/call, and Prisma's
 * transaction costs ~1 ms more per commit in round trips and query compilation.
 */
async function inTransaction<T>(db: ReceiptsDatabase, work: (query: Query) => Promise<T>): Promise<T> {
  return db.sql.transaction((tx) => work((text, params) => tx.query(text, params)), { begin: CHAIN_LOCK });
}

function toReceipt(row: ReceiptRow): Receipt {
  return {
    seq: BigInt(row.seq),
    callId: row.call_id,
    aginId: row.agin_id,
    agentPrincipal: row.agent_principal,
    accountId: row.account_id,
    tool: row.tool,
    provider: row.provider,
    status: row.status as ReceiptStatus,
    outcome: row.outcome,
    latencyMs: row.latency_ms,
    resultDigest: row.result_digest,
    time: new Date(row.created_at).getTime(),
    prevHash: row.prev_hash ?? '',
    leafHash: row.leaf_hash ?? '',
  };
}

/**
 * Appends receipts to the log in one transaction under the chain lock: duplicates (same call_id,
 * already stored or twice in the batch) are dropped, seq values are drawn while the lock is held
 * so seq order is chain order, and prev/leaf hashes are computed before the rows are inserted.
 * Returns how many rows were inserted.
 */
export async function appendReceipts(db: ReceiptsDatabase, inputs: readonly ReceiptInput[]): Promise<number> {
  // The first write of a call_id is the one stored.
  const first = new Map<string, ReceiptInput>();
  for (const r of inputs) if (!first.has(r.callId)) first.set(r.callId, r);
  const batch = [...first.values()];
  if (batch.length === 0) return 0;
  return inTransaction(db, async (query) => {
    const [state] = (await query(
      `SELECT (SELECT coalesce(array_agg("call_id"), '{}') FROM "receipts" WHERE "call_id" = ANY($1::text[])) AS existing,
              (SELECT "prev_hash" FROM "receipts" ORDER BY "seq" DESC LIMIT 1) AS head_prev,
              (SELECT "leaf_hash" FROM "receipts" ORDER BY "seq" DESC LIMIT 1) AS head_leaf,
              ARRAY(SELECT nextval(pg_get_serial_sequence('receipts', 'seq'))::text FROM generate_series(1, $2::int)) AS seqs`,
      [batch.map((r) => r.callId), batch.length],
    )) as [{ existing: string[]; head_prev: string | null; head_leaf: string | null; seqs: string[] }];
    const stored = new Set(state.existing);
    const fresh = batch.filter((r) => !stored.has(r.callId));
    if (fresh.length === 0) return 0;
    const hasHead = state.head_prev !== null || state.head_leaf !== null;
    if (hasHead && (!state.head_prev || !state.head_leaf)) throw new Error('the last receipt has no hashes; the log is damaged');
    let prev = hasHead ? chainHash(state.head_prev!, state.head_leaf!) : GENESIS_HASH;
    // Values drawn for call_ids that turned out to be stored already are left as gaps.
    const seqs = state.seqs.map((v) => BigInt(v)).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    const cols = { seq: [] as string[], prev: [] as string[], leaf: [] as string[], time: [] as string[] };
    fresh.forEach((r, i) => {
      const seq = seqs[i]!;
      const leaf = receiptLeafHash({ ...r, seq });
      cols.seq.push(seq.toString());
      cols.prev.push(prev);
      cols.leaf.push(leaf);
      cols.time.push(new Date(r.time).toISOString());
      prev = chainHash(prev, leaf);
    });
    const inserted = await query(
      `INSERT INTO "receipts" ("seq", "call_id", "agin_id", "agent_principal", "account_id", "tool", "provider", "status", "outcome",
         "latency_ms", "result_digest", "created_at", "prev_hash", "leaf_hash")
       SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[],
         $10::int[], $11::text[], $12::timestamptz[], $13::text[], $14::text[])
       ON CONFLICT ("call_id") DO NOTHING
       RETURNING 1 AS ok`,
      [
        cols.seq,
        fresh.map((r) => r.callId),
        fresh.map((r) => r.aginId),
        fresh.map((r) => r.agentPrincipal),
        fresh.map((r) => r.accountId),
        fresh.map((r) => r.tool),
        fresh.map((r) => r.provider),
        fresh.map((r) => r.status),
        fresh.map((r) => r.outcome),
        fresh.map((r) => r.latencyMs),
        fresh.map((r) => r.resultDigest),
        cols.time,
        cols.prev,
        cols.leaf,
      ],
    );
    return inserted.length;
  });
}

/** Receipts after `afterSeq` in seq order (every account), for building the tree. */
export async function readLog(prisma: PrismaClient, afterSeq: bigint, limit: number): Promise<Receipt[]> {
  const rows = await prisma.$queryRawUnsafe<ReceiptRow[]>(
    `SELECT ${COLUMNS} FROM "receipts" WHERE "seq" > $1::bigint ORDER BY "receipts"."seq" LIMIT $2::int`,
    afterSeq.toString(),
    limit,
  );
  return rows.map(toReceipt);
}

/** One page of an account's receipts in seq order. */
export async function listReceipts(prisma: PrismaClient, filter: ReceiptFilter, limit: number): Promise<Receipt[]> {
  const where = ['"account_id" = $1'];
  const params: unknown[] = [filter.accountId];
  const add = (sql: string, value: unknown) => {
    params.push(value);
    where.push(sql.replace('?', `$${params.length}`));
  };
  if (filter.aginId !== undefined) add('"agin_id" = ?', filter.aginId);
  if (filter.tool !== undefined) add('"tool" = ?', filter.tool);
  if (filter.provider !== undefined) add('"provider" = ?', filter.provider);
  if (filter.status !== undefined) add('"status" = ?', filter.status);
  if (filter.since !== undefined) add('"created_at" >= ?::timestamptz', filter.since.toISOString());
  if (filter.until !== undefined) add('"created_at" < ?::timestamptz', filter.until.toISOString());
  if (filter.afterSeq !== undefined) add('"seq" > ?::bigint', filter.afterSeq.toString());
  params.push(limit);
  const rows = await prisma.$queryRawUnsafe<ReceiptRow[]>(
    `SELECT ${COLUMNS} FROM "receipts" WHERE ${where.join(' AND ')} ORDER BY "receipts"."seq" LIMIT $${params.length}::int`,
    ...params,
  );
  return rows.map(toReceipt);
}

/** One receipt by call id. */
export async function findReceipt(prisma: PrismaClient, callId: string): Promise<Receipt | undefined> {
  const rows = await prisma.$queryRawUnsafe<ReceiptRow[]>(`SELECT ${COLUMNS} FROM "receipts" WHERE "call_id" = $1`, callId);
  return rows[0] ? toReceipt(rows[0]) : undefined;
}

/** How many receipts are stored. */
export async function countReceipts(prisma: PrismaClient): Promise<number> {
  const [row] = await prisma.$queryRawUnsafe<{ n: string }[]>(`SELECT count(*)::text AS n FROM "receipts"`);
  return Number(row?.n ?? 0);
}

/** The checkpoint with the largest tree. */
export async function latestCheckpoint(prisma: PrismaClient): Promise<Checkpoint | undefined> {
  const row = await prisma.receiptCheckpoint.findFirst({ orderBy: { treeSize: 'desc' } });
  if (!row) return undefined;
  return {
    treeSize: Number(row.treeSize),
    rootHash: row.rootHash,
    chainHead: row.chainHead,
    timestamp: row.createdAt.getTime(),
    keyId: row.keyId,
    signature: row.signature,
  };
}

/** Stores a checkpoint; a concurrent one of the same size wins and this one is dropped. */
export async function saveCheckpoint(prisma: PrismaClient, c: Checkpoint): Promise<void> {
  await prisma.$executeRawUnsafe(
    `INSERT INTO "receipt_checkpoints" ("tree_size", "root_hash", "chain_head", "key_id", "signature", "created_at")
     VALUES ($1::bigint, $2, $3, $4, $5, $6::timestamptz) ON CONFLICT ("tree_size") DO NOTHING`,
    String(c.treeSize),
    c.rootHash,
    c.chainHead,
    c.keyId,
    c.signature,
    new Date(c.timestamp).toISOString(),
  );
}

/** Takes (or renews) the named lease for `owner` until `now + ms`; false when another holds it. */
export async function acquireLease(prisma: PrismaClient, name: string, owner: string, now: number, ms: number): Promise<boolean> {
  const rows = await prisma.$queryRawUnsafe<{ owner: string }[]>(
    `INSERT INTO "job_leases" ("name", "owner", "until") VALUES ($1, $2, $3::timestamptz)
     ON CONFLICT ("name") DO UPDATE SET "owner" = EXCLUDED."owner", "until" = EXCLUDED."until"
      WHERE "job_leases"."until" < $4::timestamptz OR "job_leases"."owner" = EXCLUDED."owner"
     RETURNING "owner"`,
    name,
    owner,
    new Date(now + ms).toISOString(),
    new Date(now).toISOString(),
  );
  return rows.length === 1;
}
