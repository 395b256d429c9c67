import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Name of the lock file a Plaza server keeps in its embedded data folder. */
export const LOCK_FILE = 'plaza.lock';

/** What the lock file says about its owner. */
export interface LockOwner {
  pid: number;
  startedAt: string;
}

/** The data folder is owned by another live process. */
export class DataDirLockedError extends Error {
  readonly owner: LockOwner;

  constructor(dir: string, owner: LockOwner) {
    super(`The embedded database in ${dir} is in use by another Plaza process (pid ${owner.pid}, since ${owner.startedAt}).`);
    this.name = 'DataDirLockedError';
    this.owner = owner;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The live owner of `dir`'s lock, or undefined when the folder is free (stale locks count as free). */
export function readLockOwner(dir: string): LockOwner | undefined {
  try {
    const owner = JSON.parse(readFileSync(join(dir, LOCK_FILE), 'utf8')) as LockOwner;
    if (typeof owner.pid === 'number' && owner.pid !== process.pid && isAlive(owner.pid)) return owner;
    return undefined;
  } catch {
    return undefined;
  }
}

/**
 * Takes the exclusive lock on an embedded data folder: PGlite must have exactly one owner
 * process, or the folder is corrupted. Stale locks (dead pid) are taken over. Returns the release.
 */
export function acquireDataDirLock(dir: string): () => void {
  mkdirSync(dir, { recursive: true });
  const path = join(dir, LOCK_FILE);
  const me: LockOwner = { pid: process.pid, startedAt: new Date().toISOString() };
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      writeFileSync(path, JSON.stringify(me), { flag: 'wx', mode: 0o600 });
      return () => rmSync(path, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const owner = readLockOwner(dir);
      if (owner) throw new DataDirLockedError(dir, owner);
      rmSync(path, { force: true });
    }
  }
  throw new Error(`Could not take the lock ${path}`);
}
