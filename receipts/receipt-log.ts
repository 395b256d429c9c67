/**
 * The tamper-evident log over the `receipts` table: it mirrors the leaves in seq order (checking
 * every row's leaf and chain link as it loads them), builds signed checkpoints, and answers
 * queries with inclusion proofs. Checkpoints are built by one instance at a time (a lease).
 */
import { type Clock, systemClock } from '../src/kernel/index.ts';
import { type Checkpoint, type CheckpointSigner, checkpointText } from './checkpoint.ts';
import type { ReceiptFilter, ReceiptsDatabase } from './database.ts';
import { chainHash, GENESIS_HASH, type Receipt, receiptLeafHash } from './encoding.ts';
import {
  acquireLease,
  findReceipt,
  latestCheckpoint,
  listReceipts,
  readLog,
  saveCheckpoint,
} from './internal/repository.ts';
import type { ReceiptsLog } from './log-sink.ts';
import { createMerkleTree } from './merkle.ts';
import { type InclusionProof, renderCheckpoint, renderInclusion, renderReceipt } from './render.ts';

/** A row whose stored hashes do not match its fields or its predecessor. */
export interface LogDamage {
  seq: bigint;
  callId: string;
  problem: string;
}

/** A receipt with its proof against a checkpoint (proof null when no checkpoint covers it yet). */
export interface ProvenReceipt {
  receipt: Receipt;
  inclusion: InclusionProof | null;
  checkpoint: Checkpoint | null;
}

/** See {@link createReceiptLog}. */
export interface ReceiptLog {
  /** Signs a checkpoint over every committed receipt, unless the newest one already covers them. */
  checkpoint(): Promise<Checkpoint | undefined>;
  getLatestCheckpoint(): Promise<Checkpoint | undefined>;
  /** The latest checkpoint, first signing a new one when it is older than `maxAgeMs` and the log grew. */
  freshCheckpoint(maxAgeMs: number): Promise<Checkpoint | undefined>;
  /** One page of an account's receipts in seq order; `nextCursor` is the last seq when more may follow. */
  list(filter: ReceiptFilter, limit: number): Promise<{ receipts: Receipt[]; nextCursor: string | null }>;
  /** A receipt by call id with its inclusion proof; undefined when missing or not `accountId`'s. */
  get(callId: string, accountId: string): Promise<ProvenReceipt | undefined>;
  /**
   * The account's receipts as JSON lines (checkpoint line first), each with its inclusion proof:
   * the receipts that checkpoint covers, so an export taken while calls come in still verifies.
   */
  exportLines(filter: ReceiptFilter): AsyncGenerator<string>;
  /**
   * The consistency proof (hex) between the trees of the first `first` and `second` receipts;
   * undefined when `second` is beyond the latest checkpoint.
   */
  consistency(first: number, second: number): Promise<string[] | undefined>;
  /** Damage found while loading the log (the first bad row), if any. */
  damage(): LogDamage | undefined;
  /** Checkpoints every `intervalMs` while this instance holds the lease; returns a stop function. */
  startCheckpointing(options: { intervalMs: number; owner: string }): () => Promise<void>;
}

/** Options of {@link createReceiptLog}. */
export interface ReceiptLogOptions {
  db: ReceiptsDatabase;
  signer: CheckpointSigner;
  log: ReceiptsLog;
  clock?: Clock;
}

const PAGE = 5_000;
const LEASE = 'receipts.checkpoint';

/** How often a damaged log is said again while it lasts (the checkpoint loop tries every 10 s). */
const DAMAGE_REPEAT_MS = 600_000;

/** A checkpoint refused because a stored receipt does not match its hashes. */
class LogDamagedError extends Error {}

/** Creates the log view for one process. */
export function createReceiptLog(options: ReceiptLogOptions): ReceiptLog {
  const { db, signer, log } = options;
  const prisma = db.prisma;
  const clock = options.clock ?? systemClock;
  const tree = createMerkleTree();
  const seqs: bigint[] = [];
  let head = GENESIS_HASH;
  let lastSeq = 0n;
  let firstDamage: LogDamage | undefined;
  /** When the damage was last logged: said once, then every DAMAGE_REPEAT_MS, not at every try. */
  let damageSaidAt = 0;
  let syncing: Promise<void> | undefined;
  let resync: Promise<void> | undefined;

  /**
   * Loads receipts committed since the last look, checking each one. A load in flight may have
   * read before what the caller needs was committed (e.g. the rows of another instance's newer
   * checkpoint): the caller then waits for the next load, which starts when that one ends.
   */
  function sync(): Promise<void> {
    if (syncing) {
      resync ??= syncing
        .catch(() => undefined)
        .then(() => {
          resync = undefined;
          return sync();
        });
      return resync;
    }
    syncing = (async () => {
      for (;;) {
        const rows = await readLog(prisma, lastSeq, PAGE);
        for (const r of rows) {
          const problem =
            r.prevHash !== head
              ? 'prev_hash does not link to the previous receipt'
              : receiptLeafHash(r) !== r.leafHash
                ? 'leaf_hash does not match the receipt fields'
                : undefined;
          if (problem && !firstDamage) {
            firstDamage = { seq: r.seq, callId: r.callId, problem };
            damageSaidAt = clock.now();
            log.error(
              { seq: r.seq.toString(), call_id: r.callId, problem },
              'receipt log damaged: checkpoints stopped',
            );
          }
          tree.append(Buffer.from(/^[0-9a-f]{64}$/.test(r.leafHash) ? r.leafHash : '00'.repeat(32), 'hex'));
          seqs.push(r.seq);
          head =
            /^[0-9a-f]{64}$/.test(r.prevHash) && /^[0-9a-f]{64}$/.test(r.leafHash)
              ? chainHash(r.prevHash, r.leafHash)
              : GENESIS_HASH;
          lastSeq = r.seq;
        }
        if (rows.length < PAGE) return;
      }
    })().finally(() => {
      syncing = undefined;
    });
    return syncing;
  }

  function indexOf(seq: bigint): number {
    let lo = 0;
    let hi = seqs.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const value = seqs[mid]!;
      if (value === seq) return mid;
      if (value < seq) lo = mid + 1;
      else hi = mid - 1;
    }
    return -1;
  }

  let checkpointing: Promise<Checkpoint | undefined> | undefined;
  /** One checkpoint at a time per process; concurrent callers share it. */
  function checkpoint(): Promise<Checkpoint | undefined> {
    checkpointing ??= makeCheckpoint().finally(() => {
      checkpointing = undefined;
    });
    return checkpointing;
  }

  async function makeCheckpoint(): Promise<Checkpoint | undefined> {
    await sync();
    const latest = await latestCheckpoint(prisma);
    if (firstDamage)
      throw new LogDamagedError(
        `receipt log damaged at seq ${firstDamage.seq} (${firstDamage.callId}): ${firstDamage.problem}`,
      );
    if (latest && latest.treeSize >= tree.size) return latest;
    if (tree.size === 0) return undefined;
    if (latest && tree.root(latest.treeSize).toString('hex') !== latest.rootHash) {
      throw new Error(`receipt log no longer matches the signed checkpoint of size ${latest.treeSize}`);
    }
    const treeHead = {
      treeSize: tree.size,
      rootHash: tree.root().toString('hex'),
      chainHead: head,
      timestamp: clock.now(),
    };
    const signed = await signer.sign(checkpointText(treeHead));
    await saveCheckpoint(prisma, { ...treeHead, ...signed });
    return latestCheckpoint(prisma);
  }

  /** The newest checkpoint, after trying to make one that covers everything (a damaged log keeps the old one). */
  async function coveringCheckpoint(): Promise<Checkpoint | undefined> {
    try {
      return await checkpoint();
    } catch (error) {
      if (error instanceof LogDamagedError) sayDamageAgain();
      else log.warn({ err: error }, 'no new receipt checkpoint; using the latest one');
      return latestCheckpoint(prisma);
    }
  }

  /** A known damage, said again once DAMAGE_REPEAT_MS have passed since it was last said. */
  function sayDamageAgain(): void {
    const now = clock.now();
    if (!firstDamage || now - damageSaidAt < DAMAGE_REPEAT_MS) return;
    damageSaidAt = now;
    log.error(
      { seq: firstDamage.seq.toString(), call_id: firstDamage.callId, problem: firstDamage.problem },
      'receipt log damaged: still no checkpoint over it (said again every 10 minutes while it lasts)',
    );
  }

  function prove(r: Receipt, cp: Checkpoint | undefined): InclusionProof | null {
    const index = indexOf(r.seq);
    if (!cp || index < 0 || index >= cp.treeSize || cp.treeSize > tree.size) return null;
    return {
      leafIndex: index,
      treeSize: cp.treeSize,
      auditPath: tree.inclusionProof(index, cp.treeSize).map((h) => h.toString('hex')),
    };
  }

  return {
    checkpoint,
    getLatestCheckpoint: () => latestCheckpoint(prisma),
    damage: () => firstDamage,

    async consistency(first, second) {
      const latest = await latestCheckpoint(prisma);
      if (!latest || second > latest.treeSize || first < 0 || first > second) return undefined;
      if (latest.treeSize > tree.size) await sync();
      // Rows the checkpoint covers are missing from the database (a damaged log): no proof.
      if (second > tree.size) return undefined;
      return tree.consistencyProof(first, second).map((h) => h.toString('hex'));
    },

    async freshCheckpoint(maxAgeMs) {
      const latest = await latestCheckpoint(prisma);
      if (latest && latest.timestamp + maxAgeMs > clock.now()) return latest;
      return coveringCheckpoint();
    },

    async list(filter, limit) {
      const receipts = await listReceipts(prisma, filter, limit + 1);
      const more = receipts.length > limit;
      const page = more ? receipts.slice(0, limit) : receipts;
      return { receipts: page, nextCursor: more ? page[page.length - 1]!.seq.toString() : null };
    },

    async get(callId, accountId) {
      const receipt = await findReceipt(prisma, callId);
      if (!receipt || receipt.accountId !== accountId) return undefined;
      await sync();
      let cp = await latestCheckpoint(prisma);
      const index = indexOf(receipt.seq);
      if (!cp || index >= cp.treeSize) cp = await coveringCheckpoint();
      if (cp && cp.treeSize > tree.size) await sync();
      return { receipt, inclusion: prove(receipt, cp), checkpoint: cp ?? null };
    },

    async *exportLines(filter) {
      const cp = await coveringCheckpoint();
      if (cp && cp.treeSize > tree.size) await sync();
      if (cp) yield JSON.stringify({ type: 'checkpoint', ...renderCheckpoint(cp) });
      // Every export says so (whoever's receipt it is): nothing after it will be covered.
      if (firstDamage)
        yield JSON.stringify({ type: 'damage', seq: Number(firstDamage.seq), problem: firstDamage.problem });
      // Receipts committed after the checkpoint was signed have no proof against it yet. (Without
      // any checkpoint, a damaged log that never had one, every receipt goes out unproven.)
      const covered = cp ? seqs[cp.treeSize - 1] : undefined;
      const maxSeq =
        covered !== undefined && (filter.maxSeq === undefined || covered < filter.maxSeq) ? covered : filter.maxSeq;
      let afterSeq = filter.afterSeq;
      for (;;) {
        const page = await listReceipts(
          prisma,
          { ...filter, afterSeq, ...(maxSeq !== undefined ? { maxSeq } : {}) },
          1_000,
        );
        for (const r of page) {
          const inclusion = prove(r, cp);
          yield JSON.stringify({
            type: 'receipt',
            ...renderReceipt(r),
            inclusion: inclusion ? renderInclusion(inclusion) : null,
          });
        }
        if (page.length < 1_000) return;
        afterSeq = page[page.length - 1]!.seq;
      }
    },

    startCheckpointing({ intervalMs, owner }) {
      let running: Promise<void> | undefined;
      const tick = () => {
        running ??= (async () => {
          if (await acquireLease(prisma, LEASE, owner, clock.now(), intervalMs * 3)) await checkpoint();
        })()
          .catch((error: unknown) =>
            error instanceof LogDamagedError
              ? sayDamageAgain()
              : log.error({ err: error }, 'receipt checkpoint failed'),
          )
          .finally(() => {
            running = undefined;
          });
      };
      const timer = setInterval(tick, intervalMs);
      timer.unref();
      return async () => {
        clearInterval(timer);
        await running;
      };
    },
  };
}
