/**
 * The tamper-evident log over the `receipts` table: it mirrors the leaves in seq order (checking
 * every row's leaf and chain link as it loads them), builds signed checkpoints, and answers
 * queries with inclusion proofs. Checkpoints are built by one instance at a time (a lease).
 */
import { type Clock, systemClock } from '../src/kernel/index.ts';
import type { Checkpoint, CheckpointSigner } from './checkpoint.ts';
import type { ReceiptFilter, ReceiptsDatabase } from './database.ts';
import type { Receipt } from './encoding.ts';
import { createLogCheckpoints } from './internal/log-checkpoints.ts';
import { createLogMirror, type LogDamage } from './internal/log-mirror.ts';
import { findReceipt, latestCheckpoint, listReceipts } from './internal/repository.ts';
import type { ReceiptsLog } from './log-sink.ts';
import { type InclusionProof, renderCheckpoint, renderInclusion, renderReceipt } from './render.ts';

export type { LogDamage } from './internal/log-mirror.ts';

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

/**
 * Creates the log view for one process: the mirror (internal/log-mirror.ts) and the checkpoint
 * maker (internal/log-checkpoints.ts) put together, and the queries over them.
 */
export function createReceiptLog(options: ReceiptLogOptions): ReceiptLog {
  const { db, signer, log } = options;
  const prisma = db.prisma;
  const clock = options.clock ?? systemClock;
  const mirror = createLogMirror({ prisma, log, clock });
  const { tree, seqs, sync, indexOf, prove } = mirror;
  const { checkpoint, coveringCheckpoint, startCheckpointing } = createLogCheckpoints({
    prisma,
    signer,
    log,
    clock,
    mirror,
  });

  return {
    checkpoint,
    getLatestCheckpoint: () => latestCheckpoint(prisma),
    damage: mirror.damage,
    startCheckpointing,

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
      const firstDamage = mirror.damage();
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
  };
}
