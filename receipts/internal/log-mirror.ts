/**
 * The process's mirror of the receipt log: the Merkle tree and seq index over every committed
 * row, loaded in seq order with each row's leaf and chain link checked as it arrives, and the
 * first damage found. Apart from receipt-log.ts so loading and checking read on their own; the
 * checkpoint maker and the queries both read from it.
 */
import type { Clock } from '../../src/kernel/index.ts';
import type { Checkpoint } from '../checkpoint.ts';
import type { ReceiptsDatabase } from '../database.ts';
import { chainHash, GENESIS_HASH, type Receipt, receiptLeafHash } from '../encoding.ts';
import type { ReceiptsLog } from '../log-sink.ts';
import { createMerkleTree, type MerkleTree } from '../merkle.ts';
import type { InclusionProof } from '../render.ts';
import { readLog } from './repository.ts';

/** A row whose stored hashes do not match its fields or its predecessor. */
export interface LogDamage {
  seq: bigint;
  callId: string;
  problem: string;
}

/** See {@link createLogMirror}. */
export interface LogMirror {
  /** The Merkle tree over the loaded leaves, in seq order. */
  readonly tree: MerkleTree;
  /** `seqs[i]` is the seq of leaf `i`. */
  readonly seqs: readonly bigint[];
  /** The chain hash after the last loaded row. */
  head(): string;
  /** The first bad row found while loading, if any. */
  damage(): LogDamage | undefined;
  /**
   * Loads receipts committed since the last look, checking each one. A load in flight may have
   * read before what the caller needs was committed (e.g. the rows of another instance's newer
   * checkpoint): the caller then waits for the next load, which starts when that one ends.
   */
  sync(): Promise<void>;
  /** The leaf index of `seq`, or -1 when it is not loaded. */
  indexOf(seq: bigint): number;
  /** The inclusion proof of `r` against `cp`; null when `cp` does not cover it (or is absent). */
  prove(r: Receipt, cp: Checkpoint | undefined): InclusionProof | null;
  /** A known damage, said again once DAMAGE_REPEAT_MS have passed since it was last said. */
  sayDamageAgain(): void;
}

const PAGE = 5_000;

/** How often a damaged log is said again while it lasts (the checkpoint loop tries every 10 s). */
const DAMAGE_REPEAT_MS = 600_000;

/** Creates an empty mirror; `sync` fills it. */
export function createLogMirror(options: {
  prisma: ReceiptsDatabase['prisma'];
  log: ReceiptsLog;
  clock: Clock;
}): LogMirror {
  const { prisma, log, clock } = options;
  const tree = createMerkleTree();
  const seqs: bigint[] = [];
  let head = GENESIS_HASH;
  let lastSeq = 0n;
  let firstDamage: LogDamage | undefined;
  /** When the damage was last logged: said once, then every DAMAGE_REPEAT_MS, not at every try. */
  let damageSaidAt = 0;
  let syncing: Promise<void> | undefined;
  let resync: Promise<void> | undefined;

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
    tree,
    seqs,
    head: () => head,
    damage: () => firstDamage,
    sync,
    indexOf,
    prove,
    sayDamageAgain,
  };
}
