/**
 * The local spool: when the database cannot take receipts, they are appended as JSON lines to a
 * file and fsync'd before the caller is answered, then replayed once the database is back. A
 * replay first renames the spool aside, so receipts spooled meanwhile go to a new file; a file is
 * deleted only after all its receipts are committed (replays are idempotent on call_id).
 */
import { closeSync, existsSync, fsyncSync, openSync, readdirSync, renameSync } from 'node:fs';
import { mkdir, open, readdir, readFile, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';

import type { ReceiptInput } from './encoding.ts';
import { parseReceiptInput } from './input.ts';

const ACTIVE = 'receipts.spool.jsonl';
const REPLAY = /^receipts\.spool\.\d+-\d+\.replay\.jsonl$/;

/** A spool folder owned by one instance. */
export interface ReceiptSpool {
  readonly dir: string;
  /** Appends receipts and fsyncs the file; resolves once they are on disk. */
  append(receipts: readonly ReceiptInput[]): Promise<void>;
  /**
   * Hands every spooled receipt to `commit` (in spool order, in chunks) and removes what was
   * committed. Returns how many receipts were replayed; rejects (keeping the files) when `commit` fails.
   */
  replay(commit: (batch: ReceiptInput[]) => Promise<void>, chunk?: number): Promise<number>;
  /** True when there is something to replay. */
  pending(): Promise<boolean>;
}

/** Opens (creating) the spool folder `dir`. `onBadLine` hears about torn or corrupt lines. */
export function createReceiptSpool(
  dir: string,
  onBadLine: (file: string, line: number) => void = () => undefined,
): ReceiptSpool {
  let queue: Promise<unknown> = Promise.resolve();
  let counter = 0;
  // Appends and the rename of a replay are serialised so no line lands in a file being replayed.
  const serial = <T>(work: () => Promise<T>): Promise<T> => {
    const next = queue.then(work, work);
    queue = next.catch(() => undefined);
    return next;
  };
  const ready = mkdir(dir, { recursive: true, mode: 0o700 });

  const replayFiles = async (): Promise<string[]> => (await readdir(dir)).filter((name) => REPLAY.test(name)).sort();

  return {
    dir,
    append(receipts) {
      return serial(async () => {
        await ready;
        const file = await open(join(dir, ACTIVE), 'a', 0o600);
        try {
          await file.write(receipts.map((r) => `${JSON.stringify(r)}\n`).join(''));
          await file.sync();
        } finally {
          await file.close();
        }
      });
    },
    async pending() {
      await ready;
      const names = await readdir(dir);
      return names.includes(ACTIVE) || names.some((name) => REPLAY.test(name));
    },
    async replay(commit, chunk = 500) {
      await ready;
      await serial(async () => {
        const names = await readdir(dir);
        if (names.includes(ACTIVE))
          await rename(join(dir, ACTIVE), join(dir, `receipts.spool.${Date.now()}-${counter++}.replay.jsonl`));
      });
      let replayed = 0;
      for (const name of await replayFiles()) {
        const path = join(dir, name);
        const lines = (await readFile(path, 'utf8')).split('\n');
        const receipts: ReceiptInput[] = [];
        lines.forEach((line, i) => {
          if (line.trim() === '') return;
          try {
            receipts.push(parseReceiptInput(JSON.parse(line)));
          } catch {
            onBadLine(path, i + 1);
          }
        });
        for (let i = 0; i < receipts.length; i += chunk) await commit(receipts.slice(i, i + chunk));
        await rm(path, { force: true });
        replayed += receipts.length;
      }
      return replayed;
    },
  };
}

/**
 * Moves every spooled receipt of `from` (a spool folder no live server holds) into `into` as files
 * to replay, so the spool of `into` commits them with its own; the rename keeps them on disk all
 * along. Both folders must be on one file system. Returns how many files were moved.
 */
export function adoptSpoolFiles(from: string, into: string): number {
  const names = readdirSync(from).filter((name) => name === ACTIVE || REPLAY.test(name));
  let counter = 0;
  for (const name of names) {
    let target: string;
    // Another range of counters than the spool's own renames, and never over an existing file.
    do target = join(into, `receipts.spool.${Date.now()}-${1_000_000 + counter++}.replay.jsonl`);
    while (existsSync(target));
    renameSync(join(from, name), target);
  }
  if (names.length > 0) for (const dir of [into, from]) syncFolder(dir);
  return names.length;
}

/** fsyncs a folder, so renames in it outlive a crash. */
function syncFolder(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
