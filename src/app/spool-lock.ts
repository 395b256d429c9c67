import { existsSync, mkdirSync } from 'node:fs';

import { adoptSpoolFiles } from '../../receipts/index.ts';
import { acquireFolderLock, type LockOwner } from '../db/index.ts';

/** Name of the lock file a serving Plaza keeps in its receipt spool folder. */
export const SPOOL_LOCK_FILE = 'spool.lock';

/** Most servers that share one configured spool folder (each takes a slot of its own). */
export const SPOOL_SLOTS = 64;

/** Every slot of the spool folder is another live server's. */
export class SpoolDirLockedError extends Error {
  readonly owner: LockOwner;

  constructor(dir: string, owner: LockOwner) {
    super(
      `The receipt spool in ${dir} and its ${SPOOL_SLOTS - 1} siblings are in use by other Plaza servers (pid ${owner.pid} holds the last, since ${owner.startedAt}).`,
    );
    this.name = 'SpoolDirLockedError';
    this.owner = owner;
  }
}

/** The folder of slot `n` of the spool `dir`: `dir` itself for the first, `dir.<n>` after it. */
export function spoolSlot(dir: string, n: number): string {
  return n === 1 ? dir : `${dir}.${n}`;
}

/** A spool slot this server holds. */
export interface HeldSpool {
  /** The folder this server spools to. */
  dir: string;
  /** Spool files of stopped servers' slots moved into it, to be replayed with its own. */
  adopted: number;
  release(): void;
}

/**
 * Takes a receipt spool folder for this server. A spool is one process's: servers on one folder
 * would rename and delete each other's files while replaying, and lose receipts whose calls were
 * answered. Instances started with one PLAZA_DATA_DIR (two `npm start` in one checkout) each take
 * the first free slot: the configured folder, then `<folder>.2`, `<folder>.3`, … A slot whose
 * server stopped (its lock stale or gone) may still hold receipts spooled while the database was
 * down: the server that starts moves them into its own slot, so they are replayed even when
 * nobody takes that slot again.
 */
export function acquireSpool(dir: string): HeldSpool {
  let busy: LockOwner | undefined;
  for (let n = 1; n <= SPOOL_SLOTS; n++) {
    const slot = spoolSlot(dir, n);
    // The spool's own mode (receipts name agents and calls), as the receipt writer creates it.
    mkdirSync(slot, { recursive: true, mode: 0o700 });
    const release = tryLock(slot, (owner) => (busy = owner));
    if (!release) continue;
    let adopted = 0;
    try {
      for (let m = 1; m <= SPOOL_SLOTS; m++) {
        const other = spoolSlot(dir, m);
        if (m === n || !existsSync(other)) continue;
        const releaseOther = tryLock(other, () => undefined);
        if (!releaseOther) continue;
        try {
          adopted += adoptSpoolFiles(other, slot);
        } finally {
          releaseOther();
        }
      }
    } catch (error) {
      release();
      throw error;
    }
    return { dir: slot, adopted, release };
  }
  throw new SpoolDirLockedError(dir, busy!);
}

/** The release of `slot`'s lock, or undefined (telling `busy` its owner) when a live server holds it. */
function tryLock(slot: string, busy: (owner: LockOwner) => void): (() => void) | undefined {
  try {
    return acquireFolderLock(slot, SPOOL_LOCK_FILE, (owner) => new HeldElsewhere(owner));
  } catch (error) {
    if (!(error instanceof HeldElsewhere)) throw error;
    busy(error.owner);
    return undefined;
  }
}

class HeldElsewhere extends Error {
  readonly owner: LockOwner;

  constructor(owner: LockOwner) {
    super('held');
    this.owner = owner;
  }
}
