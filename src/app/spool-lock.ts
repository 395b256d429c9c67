import { mkdirSync } from 'node:fs';

import { acquireFolderLock, type LockOwner } from '../db/index.ts';

/** Name of the lock file a serving Plaza keeps in its receipt spool folder. */
export const SPOOL_LOCK_FILE = 'spool.lock';

/** The receipt spool folder is another live server's. */
export class SpoolDirLockedError extends Error {
  readonly owner: LockOwner;

  constructor(dir: string, owner: LockOwner) {
    super(`The receipt spool in ${dir} is in use by another Plaza server (pid ${owner.pid}, since ${owner.startedAt}).`);
    this.name = 'SpoolDirLockedError';
    this.owner = owner;
  }
}

/**
 * Takes the receipt spool folder for this server. The spool is one process's: two servers on one
 * folder (two instances started with the same PLAZA_DATA_DIR, e.g. the default `./.plaza`) would
 * rename and delete each other's files while replaying, and lose receipts whose calls were answered.
 * Returns the release.
 */
export function acquireSpoolLock(dir: string): () => void {
  // The spool's own mode (receipts name agents and calls), as the receipt writer creates it.
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  return acquireFolderLock(dir, SPOOL_LOCK_FILE, (owner) => new SpoolDirLockedError(dir, owner));
}
