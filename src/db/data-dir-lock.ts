import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';

import { breakStaleLock, createLockFile, processAlive } from '../kernel/index.ts';

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
    super(
      `The embedded database in ${dir} is in use by another Plaza process (pid ${owner.pid}, since ${owner.startedAt}).`,
    );
    this.name = 'DataDirLockedError';
    this.owner = owner;
  }
}

/**
 * The lock's owner when it is a live process other than this one. A lock naming this process is
 * one it left itself (a database opened again in the same process) and counts as free.
 */
function liveOwner(text: string): LockOwner | undefined {
  try {
    const owner = JSON.parse(text) as LockOwner;
    if (typeof owner.pid === 'number' && owner.pid !== process.pid && processAlive(owner.pid)) return owner;
  } catch {
    // Not an owner: see stale.
  }
  return undefined;
}

/** A lock with no live owner is stale; one that names none (an older Plaza's, cut short) once 10 s old. */
function stale(text: string, ageMs: number): boolean {
  try {
    JSON.parse(text);
  } catch {
    return ageMs >= 10_000;
  }
  return liveOwner(text) === undefined;
}

/** The live owner of `dir`'s lock (`file`, default the data folder's), or undefined when the folder is free (stale locks count as free). */
export function readLockOwner(dir: string, file = LOCK_FILE): LockOwner | undefined {
  try {
    return liveOwner(readFileSync(join(dir, file), 'utf8'));
  } catch {
    return undefined;
  }
}

/**
 * Takes the exclusive lock on an embedded data folder: PGlite must have exactly one owner
 * process, or the folder is corrupted. A stale lock (dead pid) is broken by one process at a
 * time (see breakStaleLock). Returns the release.
 */
export function acquireDataDirLock(dir: string): () => void {
  return acquireFolderLock(dir, LOCK_FILE, (owner) => new DataDirLockedError(dir, owner));
}

/**
 * Takes the lock file `file` in `dir` for this process, or throws `locked(owner)` while another
 * live process holds it. A stale lock (dead pid) is broken by one process at a time. Returns the
 * release.
 */
export function acquireFolderLock(dir: string, file: string, locked: (owner: LockOwner) => Error): () => void {
  mkdirSync(dir, { recursive: true });
  const path = join(dir, file);
  const me: LockOwner = { pid: process.pid, startedAt: new Date().toISOString() };
  for (let attempt = 0; attempt < 50; attempt++) {
    if (createLockFile(path, JSON.stringify(me))) return () => rmSync(path, { force: true });
    const owner = readLockOwner(dir, file);
    if (owner) throw locked(owner);
    // Another process is breaking the lock, or it is fresh and still names nobody: look again soon.
    if (!breakStaleLock(path, stale)) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20);
  }
  throw new Error(`Could not take the lock ${path}: another process holds it, or is taking it`);
}
