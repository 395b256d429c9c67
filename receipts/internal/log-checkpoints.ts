/**
 * Signing checkpoints over the mirrored receipt log: one checkpoint at a time per process, one
 * instance at a time across processes (a lease), and a damaged log refused. Apart from
 * receipt-log.ts so the signing rules read on their own; the queries only ask for a checkpoint.
 */
import type { Clock } from '../../src/kernel/index.ts';
import { type Checkpoint, type CheckpointSigner, checkpointText } from '../checkpoint.ts';
import type { ReceiptsDatabase } from '../database.ts';
import type { ReceiptsLog } from '../log-sink.ts';
import type { LogMirror } from './log-mirror.ts';
import { acquireLease, latestCheckpoint, saveCheckpoint } from './repository.ts';

/** See {@link createLogCheckpoints}. */
export interface LogCheckpoints {
  /** Signs a checkpoint over every committed receipt, unless the newest one already covers them. */
  checkpoint(): Promise<Checkpoint | undefined>;
  /** The newest checkpoint, after trying to make one that covers everything (a damaged log keeps the old one). */
  coveringCheckpoint(): Promise<Checkpoint | undefined>;
  /** Checkpoints every `intervalMs` while this instance holds the lease; returns a stop function. */
  startCheckpointing(options: { intervalMs: number; owner: string }): () => Promise<void>;
}

const LEASE = 'receipts.checkpoint';

/** A checkpoint refused because a stored receipt does not match its hashes. */
class LogDamagedError extends Error {}

/** Creates the checkpoint maker over `mirror`. */
export function createLogCheckpoints(options: {
  prisma: ReceiptsDatabase['prisma'];
  signer: CheckpointSigner;
  log: ReceiptsLog;
  clock: Clock;
  mirror: LogMirror;
}): LogCheckpoints {
  const { prisma, signer, log, clock, mirror } = options;
  const { tree } = mirror;

  let checkpointing: Promise<Checkpoint | undefined> | undefined;
  /** One checkpoint at a time per process; concurrent callers share it. */
  function checkpoint(): Promise<Checkpoint | undefined> {
    checkpointing ??= makeCheckpoint().finally(() => {
      checkpointing = undefined;
    });
    return checkpointing;
  }

  async function makeCheckpoint(): Promise<Checkpoint | undefined> {
    await mirror.sync();
    const latest = await latestCheckpoint(prisma);
    const firstDamage = mirror.damage();
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
      chainHead: mirror.head(),
      timestamp: clock.now(),
    };
    const signed = await signer.sign(checkpointText(treeHead));
    await saveCheckpoint(prisma, { ...treeHead, ...signed });
    return latestCheckpoint(prisma);
  }

  async function coveringCheckpoint(): Promise<Checkpoint | undefined> {
    try {
      return await checkpoint();
    } catch (error) {
      if (error instanceof LogDamagedError) mirror.sayDamageAgain();
      else log.warn({ err: error }, 'no new receipt checkpoint; using the latest one');
      return latestCheckpoint(prisma);
    }
  }

  function startCheckpointing({ intervalMs, owner }: { intervalMs: number; owner: string }): () => Promise<void> {
    let running: Promise<void> | undefined;
    const tick = () => {
      running ??= (async () => {
        if (await acquireLease(prisma, LEASE, owner, clock.now(), intervalMs * 3)) await checkpoint();
      })()
        .catch((error: unknown) =>
          error instanceof LogDamagedError
            ? mirror.sayDamageAgain()
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
  }

  return { checkpoint, coveringCheckpoint, startCheckpointing };
}
