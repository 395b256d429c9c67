/**
 * The receipts data layer: the one place that speaks SQL about `receipts`, `receipt_checkpoints`
 * and the checkpoint lease in `job_leases`. Returns domain types, never Prisma rows.
 */
import type { PrismaClient } from '../../src/db/index.ts';
import type { Checkpoint } from '../checkpoint.ts';
import type { ReceiptFilter, ReceiptsDatabase } from '../database.ts';
import {
  chainHash,
  GENESIS_HASH,
  type Receipt,
  type ReceiptInput,
  receiptLeafHash,
  type ReceiptStatus,
} from '../encoding.ts';

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

/**
 * BEGIN's companion script for a batch of `n`: the chain lock, then the chain's head and `n` seq
 * values drawn while the lock is held (so seq order is chain order), all in BEGIN's round trip.
 */
function lockAndReadHead(n: number): string {
  if (!Number.isSafeInteger(n) || n < 1) throw new TypeError(`a receipt batch needs a positive size, not ${n}`);
  return `${CHAIN_LOCK};
    SELECT (SELECT "prev_hash" FROM "receipts" ORDER BY "seq" DESC LIMIT 1) AS head_prev,
           (SELECT "leaf_hash" FROM "receipts" ORDER BY "seq" DESC LIMIT 1) AS head_leaf,
           ARRAY(SELECT nextval(pg_get_serial_sequence('receipts', 'seq'))::text FROM generate_series(1, ${n})) AS seqs`;
}

interface ChainHead {
  head_prev: string | null;
  head_leaf: string | null;
  seqs: string[];
}

/** The unique violation: an INSERT met a call_id (or seq) that is stored already. */
const UNIQUE_VIOLATION = '23505';

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

/** One row of the INSERT's JSON: a stored row, with its time as ISO text and both hashes set. */
type ReceiptJsonRow = Omit<ReceiptRow, 'created_at' | 'prev_hash' | 'leaf_hash'> & {
  created_at: string;
  prev_hash: string;
  leaf_hash: string;
};

/**
 * Chains `fresh` onto the head: each row's seq (drawn values in ascending order; values left over
 * stay gaps), leaf hash over its fields, and prev hash linking it to the row before.
 */
function chainRows(fresh: readonly ReceiptInput[], state: ChainHead | undefined): ReceiptJsonRow[] {
  if (!state) throw new Error('the chain head was not read');
  const hasHead = state.head_prev !== null || state.head_leaf !== null;
  if (hasHead && (!state.head_prev || !state.head_leaf))
    throw new Error('the last receipt has no hashes; the log is damaged');
  const seqs = state.seqs.map((v) => BigInt(v)).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  if (seqs.length < fresh.length)
    throw new Error(`drew ${seqs.length} receipt seq values for ${fresh.length} receipts`);
  return chainFrom(fresh, hasHead ? chainHash(state.head_prev!, state.head_leaf!) : GENESIS_HASH, seqs);
}

/** Rows for `fresh` with the given seq values, the first linked to `prev` (the chain hash so far). */
function chainFrom(fresh: readonly ReceiptInput[], prev: string, seqs: readonly bigint[]): ReceiptJsonRow[] {
  return fresh.map((r, i) => {
    const seq = seqs[i]!;
    const leaf = receiptLeafHash({ ...r, seq });
    const row: ReceiptJsonRow = {
      seq: seq.toString(),
      call_id: r.callId,
      agin_id: r.aginId,
      agent_principal: r.agentPrincipal,
      account_id: r.accountId,
      tool: r.tool,
      provider: r.provider,
      status: r.status,
      outcome: r.outcome,
      latency_ms: r.latencyMs,
      result_digest: r.resultDigest,
      created_at: new Date(r.time).toISOString(),
      prev_hash: prev,
      leaf_hash: leaf,
    };
    prev = chainHash(prev, leaf);
    return row;
  });
}

/**
 * The last receipt an appender stored, kept between batches (see {@link appendReceipts}): while
 * it is still the head of the log, the next batch is chained onto it without reading the head.
 */
export interface ChainTip {
  seq: bigint;
  leafHash: string;
  /** The chain hash the next receipt's prev_hash must carry. */
  next: string;
}

/** Where an appender keeps its tip; the writer holds one for its life. */
export interface ChainTipCache {
  tip?: ChainTip;
  /**
   * Another appender moved the head after this one's last batch: batches read the head first
   * (two round trips, no failed attempt) until one finds this appender's tip still the head.
   */
  contended?: boolean;
}

function tipOfRows(rows: readonly ReceiptJsonRow[]): ChainTip | undefined {
  const last = rows.at(-1);
  return last && { seq: BigInt(last.seq), leafHash: last.leaf_hash, next: chainHash(last.prev_hash, last.leaf_hash) };
}

/**
 * One round trip, one implicit transaction: under the chain lock, the rows (chained onto `tip`,
 * with the seq values after it) are inserted only if `tip` is still the head of the log, and the
 * seq sequence is moved to the last of them so that a batch that draws its values continues after
 * them. Answers one row: how many were inserted (0: another appender moved the head).
 */
function appendAfterTipScript(rows: readonly ReceiptJsonRow[], tip: ChainTip): string {
  if (!/^[0-9a-f]{64}$/.test(tip.leafHash)) throw new Error('a chain tip without a leaf hash');
  const head = `${tip.seq.toString()}:${tip.leafHash}`;
  return `${CHAIN_LOCK};
    WITH "ins" AS (
      ${insertStatement(rows)}
      WHERE (SELECT "seq"::text || ':' || "leaf_hash" FROM "receipts" ORDER BY "seq" DESC LIMIT 1) = '${head}'
      RETURNING "seq")
    SELECT count(*)::int AS inserted, setval(pg_get_serial_sequence('receipts', 'seq'), max("seq")) FROM "ins"`;
}

/**
 * The INSERT of chained rows as one statement without parameters, so that it can travel with
 * COMMIT in one round trip: the rows are one JSON document in a dollar-quoted literal, whose tag
 * is chosen so that it does not occur in the document (dollar quoting has no escapes, so nothing
 * in the receipts can end the literal early). No ON CONFLICT: a call_id stored already fails the
 * statement, and with it the transaction, rather than leave a hole in the chain.
 */
function insertStatement(rows: readonly ReceiptJsonRow[]): string {
  const json = JSON.stringify(rows);
  let n = 0;
  while (json.includes(`$r${n}$`)) n++;
  const tag = `$r${n}$`;
  return `INSERT INTO "receipts" ("seq", "call_id", "agin_id", "agent_principal", "account_id", "tool", "provider", "status", "outcome",
      "latency_ms", "result_digest", "created_at", "prev_hash", "leaf_hash")
    SELECT "seq", "call_id", "agin_id", "agent_principal", "account_id", "tool", "provider", "status", "outcome",
      "latency_ms", "result_digest", "created_at", "prev_hash", "leaf_hash"
    FROM json_to_recordset(${tag}${json}${tag}::json) AS r("seq" bigint, "call_id" text, "agin_id" text, "agent_principal" text,
      "account_id" text, "tool" text, "provider" text, "status" text, "outcome" text, "latency_ms" int, "result_digest" text,
      "created_at" timestamptz, "prev_hash" text, "leaf_hash" text)`;
}

/**
 * Appends receipts to the log in one transaction under the chain lock, and returns how many rows
 * were inserted. Duplicates (same call_id, already stored or twice in the batch) are dropped: the
 * first write of a call_id is the one stored.
 *
 * With a `cache` whose tip is still the head of the log (this appender wrote the last receipt, the
 * usual case), a batch takes one round trip: the rows are chained onto the tip and inserted on
 * the condition that it is still the head. Otherwise (another instance appended meanwhile, or no
 * tip yet) it takes two round trips on PostgreSQL: BEGIN with the lock and the head, then the
 * INSERT with COMMIT. Once a tip has missed, batches take the two round trips until one finds the
 * tip still the head, so appenders that take turns do not pay a failed attempt per batch. Both assume no call_id of the batch is stored yet; when one is (a spool
 * replay of receipts whose commit did answer), the INSERT fails, nothing is stored, and the batch
 * goes again with the stored call_ids looked up first.
 */
export async function appendReceipts(
  db: ReceiptsDatabase,
  inputs: readonly ReceiptInput[],
  cache: ChainTipCache = {},
): Promise<number> {
  const first = new Map<string, ReceiptInput>();
  for (const r of inputs) if (!first.has(r.callId)) first.set(r.callId, r);
  const batch = [...first.values()];
  if (batch.length === 0) return 0;
  const tip = cache.tip;
  cache.tip = undefined;
  try {
    if (tip && !cache.contended) {
      const rows = chainFrom(
        batch,
        tip.next,
        batch.map((_, i) => tip.seq + BigInt(i + 1)),
      );
      const [answer] = await db.sql.script(appendAfterTipScript(rows, tip));
      if (Number(answer?.['inserted']) === rows.length) {
        cache.tip = tipOfRows(rows);
        return rows.length;
      }
      // Several appenders take turns: a tip would mostly miss, each miss a round trip under the lock.
      cache.contended = true;
    }
    return await db.sql.transaction(
      async (tx) => {
        const head = tx.begun[0] as ChainHead | undefined;
        // Nobody appended since this appender's last batch: the next may take one round trip again.
        if (tip && head?.head_leaf === tip.leafHash) cache.contended = false;
        const rows = chainRows(batch, head);
        await tx.commitWith(insertStatement(rows));
        cache.tip = tipOfRows(rows);
        return rows.length;
      },
      { begin: lockAndReadHead(batch.length) },
    );
  } catch (error) {
    cache.tip = undefined;
    if ((error as { code?: unknown }).code !== UNIQUE_VIOLATION) throw error;
  }
  return db.sql.transaction(
    async (tx) => {
      const stored = await tx.query<{ call_id: string }>(
        `SELECT "call_id" FROM "receipts" WHERE "call_id" = ANY($1::text[])`,
        [batch.map((r) => r.callId)],
      );
      const existing = new Set(stored.map((row) => row.call_id));
      const fresh = batch.filter((r) => !existing.has(r.callId));
      if (fresh.length === 0) return 0;
      const rows = chainRows(fresh, tx.begun[0] as ChainHead | undefined);
      await tx.commitWith(insertStatement(rows));
      cache.tip = tipOfRows(rows);
      return fresh.length;
    },
    { begin: lockAndReadHead(batch.length) },
  );
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
  if (filter.maxSeq !== undefined) add('"seq" <= ?::bigint', filter.maxSeq.toString());
  params.push(limit);
  const rows = await prisma.$queryRawUnsafe<ReceiptRow[]>(
    `SELECT ${COLUMNS} FROM "receipts" WHERE ${where.join(' AND ')} ORDER BY "receipts"."seq" LIMIT $${params.length}::int`,
    ...params,
  );
  return rows.map(toReceipt);
}

/** One receipt by call id. */
export async function findReceipt(prisma: PrismaClient, callId: string): Promise<Receipt | undefined> {
  const rows = await prisma.$queryRawUnsafe<ReceiptRow[]>(
    `SELECT ${COLUMNS} FROM "receipts" WHERE "call_id" = $1`,
    callId,
  );
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
export async function acquireLease(
  prisma: PrismaClient,
  name: string,
  owner: string,
  now: number,
  ms: number,
): Promise<boolean> {
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
