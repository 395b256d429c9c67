/**
 * The receipt writer: group commit into the log, a durable local spool when the database is not
 * there, and replay when it is back. One writer per process; any number of processes may write to
 * one database (the chain lock in the repository orders them).
 */
import { type Clock, systemClock } from '../src/kernel/index.ts';
import type { ReceiptsDatabase } from './database.ts';
import type { ReceiptInput } from './encoding.ts';
import { parseReceiptInput } from './input.ts';
import { appendReceipts, type ChainTipCache } from './internal/repository.ts';
import type { ReceiptsLog } from './log-sink.ts';
import { createReceiptSpool } from './spool.ts';

/** `sync`: write() resolves once the receipt is committed (or fsync'd to the spool); `async`: at once. */
export type ReceiptDurability = 'sync' | 'async';

/** Options of {@link createReceiptWriter}. */
export interface ReceiptWriterOptions {
  db: ReceiptsDatabase;
  log: ReceiptsLog;
  durability: ReceiptDurability;
  /** Folder of this instance's spool (not shared between instances). */
  spoolDir: string;
  clock?: Clock;
  /** Most receipts per INSERT transaction. Default 256. */
  maxBatch?: number;
  /**
   * How long the first receipt of a batch waits for company when nothing is in flight. Default 0
   * with `sync` (the caller waits): a batch starts once the current turn of the event loop is
   * over, so it takes every receipt that this turn produced, and receipts that arrive while a
   * commit is in flight form the next batch (group commit). 20 ms with `async` (nobody waits,
   * and on PGlite each commit costs this process's CPU whatever its size).
   */
  maxDelayMs?: number;
  /** How often the spool is looked at and replayed. Default 1000 ms. */
  retryIntervalMs?: number;
}

/** Counters of a writer, for tests, logs and metrics. */
export interface ReceiptWriterStats {
  committed: number;
  spooled: number;
  replayed: number;
  batches: number;
  /** True while receipts go to the spool because the database failed. */
  degraded: boolean;
}

/** Writes receipts; see {@link createReceiptWriter}. */
export interface ReceiptWriter {
  /**
   * Records one receipt (`time` defaults to the clock's now). Idempotent on call_id. Rejects only
   * when neither the database nor the spool took it; throws TypeError on a malformed receipt.
   */
  write(receipt: Omit<ReceiptInput, 'time'> & { time?: number }): Promise<void>;
  /** Resolves once every receipt written so far is committed or spooled. */
  flush(): Promise<void>;
  /** Replays the spool now; resolves with how many receipts were replayed (0 when the database is still down). */
  replaySpool(): Promise<number>;
  stats(): ReceiptWriterStats;
  /** Flushes, stops the replay timer; later writes throw. The spool stays for the next start. */
  close(): Promise<void>;
}

interface Pending {
  receipt: ReceiptInput;
  resolve: () => void;
  reject: (error: unknown) => void;
}

/**
 * Creates a writer. Concurrent writes are grouped: while one batch commits, the next collects,
 * and it commits as one multi-row INSERT in one transaction as soon as the first is done (or
 * after `maxDelayMs`, or at `maxBatch` rows). When a commit fails the batch is fsync'd to the
 * spool and the writer stays on the spool until a replay succeeds; the spool is also replayed at
 * start, so receipts spooled before a crash are not lost.
 */
export function createReceiptWriter(options: ReceiptWriterOptions): ReceiptWriter {
  const { db, log, durability } = options;
  if (durability !== 'sync' && durability !== 'async')
    throw new TypeError(`durability must be sync or async, not ${String(durability)}`);
  if (!options.spoolDir) throw new TypeError('spoolDir is required');
  const clock = options.clock ?? systemClock;
  const maxBatch = options.maxBatch ?? 256;
  const maxDelayMs = options.maxDelayMs ?? (durability === 'async' ? 20 : 0);
  const retryIntervalMs = options.retryIntervalMs ?? 1_000;
  if (!(maxBatch >= 1 && maxDelayMs >= 0 && retryIntervalMs >= 10))
    throw new TypeError('invalid receipt writer batching options');
  const spool = createReceiptSpool(options.spoolDir, (file, line) =>
    log.error({ file, line }, 'unreadable receipt spool line skipped'),
  );

  const stats: ReceiptWriterStats = { committed: 0, spooled: 0, replayed: 0, batches: 0, degraded: false };
  let queue: Pending[] = [];
  let inflight: Promise<void> | undefined;
  let timer: NodeJS.Timeout | undefined;
  let gather: NodeJS.Immediate | undefined;
  let replaying: Promise<number> | undefined;
  let closed = false;
  // The last receipt this writer stored: while no other instance appends, a batch takes one round trip.
  const chain: ChainTipCache = {};

  async function commit(batch: Pending[]): Promise<void> {
    const receipts = batch.map((p) => p.receipt);
    if (!stats.degraded) {
      try {
        stats.committed += await appendReceipts(db, receipts, chain);
        stats.batches++;
        for (const p of batch) p.resolve();
        return;
      } catch (error) {
        stats.degraded = true;
        log.warn({ err: error, receipts: receipts.length }, 'receipts database unavailable; spooling receipts locally');
      }
    }
    try {
      await spool.append(receipts);
      stats.spooled += receipts.length;
      for (const p of batch) p.resolve();
    } catch (error) {
      log.error(
        { err: error, receipts: receipts.length, call_ids: receipts.map((r) => r.callId) },
        'receipts could not be committed nor spooled',
      );
      for (const p of batch) p.reject(error);
    }
  }

  function start(): void {
    if (timer) clearTimeout(timer);
    timer = undefined;
    if (gather) clearImmediate(gather);
    gather = undefined;
    if (inflight || queue.length === 0) return;
    const batch = queue.slice(0, maxBatch);
    queue = queue.slice(batch.length);
    inflight = commit(batch).finally(() => {
      inflight = undefined;
      // What queued up meanwhile has waited one commit already: it goes as one batch once this
      // turn of the event loop has read what is pending — on PGlite the commit held the thread,
      // so the calls that finished meanwhile are still unread and join this batch.
      if (queue.length >= maxBatch) start();
      else if (queue.length > 0) gather ??= setImmediate(start);
    });
  }

  function kick(): void {
    if (inflight) return;
    if (queue.length >= maxBatch) start();
    else if (maxDelayMs === 0) gather ??= setImmediate(start);
    else timer ??= setTimeout(start, maxDelayMs);
  }

  async function replaySpool(): Promise<number> {
    replaying ??= (async () => {
      try {
        if (!(await spool.pending())) {
          stats.degraded = false;
          return 0;
        }
        const n = await spool.replay(async (batch) => {
          stats.committed += await appendReceipts(db, batch, chain);
        });
        stats.replayed += n;
        stats.degraded = false;
        if (n > 0) log.info({ receipts: n }, 'spooled receipts replayed');
        return n;
      } catch (error) {
        if (!stats.degraded) log.warn({ err: error }, 'receipt spool replay failed; will retry');
        stats.degraded = true;
        return 0;
      } finally {
        replaying = undefined;
      }
    })();
    return replaying;
  }

  // eslint-disable-next-line @typescript-eslint/no-floating-promises -- replaySpool catches, logs and answers 0
  const retry = setInterval(() => void replaySpool(), retryIntervalMs);
  retry.unref();
  // eslint-disable-next-line @typescript-eslint/no-floating-promises -- as above
  void replaySpool();

  return {
    write(receipt) {
      if (closed) return Promise.reject(new Error('the receipt writer is closed'));
      const parsed = parseReceiptInput({ ...receipt, time: receipt.time ?? clock.now() });
      const done = new Promise<void>((resolve, reject) => queue.push({ receipt: parsed, resolve, reject }));
      kick();
      if (durability === 'sync') return done;
      done.catch(() => undefined);
      return Promise.resolve();
    },
    async flush() {
      while (queue.length > 0 || inflight) {
        start();
        await inflight;
      }
    },
    replaySpool,
    stats: () => ({ ...stats }),
    async close() {
      closed = true;
      clearInterval(retry);
      while (queue.length > 0 || inflight) {
        start();
        await inflight;
      }
      await replaying;
    },
  };
}
