import { randomBytes } from 'node:crypto';
import { linkSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';

/** Whether a process with this pid exists (one we may not signal counts: it exists). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Creates the lock file `path` holding `content`, atomically: the content is written to a private
 * file beside it and hard-linked into place, so nobody ever reads a lock that exists but is still
 * empty (a reader that took such a lock for stale removed it, and both processes went on). False
 * when `path` exists.
 */
export function createLockFile(path: string, content: string): boolean {
  const own = `${path}.${process.pid}-${randomBytes(6).toString('hex')}.tmp`;
  writeFileSync(own, content, { flag: 'wx', mode: 0o600 });
  try {
    linkSync(own, path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  } finally {
    rmSync(own, { force: true });
  }
}

/** Says from a lock file's text and age whether its holder is gone. */
export type LockStaleness = (text: string, ageMs: number) => boolean;

/** A lock whose text names a pid is stale once that process is gone; one naming none, after `namelessMs`. */
export function pidLockStale(namelessMs: number): LockStaleness {
  return (text, ageMs) => {
    const pid = Number(text);
    return Number.isInteger(pid) && pid > 0 ? !processAlive(pid) : ageMs >= namelessMs;
  };
}

function isStale(path: string, stale: LockStaleness): boolean | undefined {
  try {
    const text = readFileSync(path, 'utf8');
    return stale(text, Date.now() - statSync(path).mtimeMs);
  } catch {
    return undefined;
  }
}

/**
 * Removes the lock file `path` when `stale` says its holder is gone; true when it did, or when
 * the lock is gone already (take it now), false when it is held.
 *
 * Reading the holder and removing the file must not interleave with another breaker: two
 * processes that find the same stale lock would otherwise both go on, the second removing the
 * lock the first had just taken. Breaking therefore holds `<path>.break` (created the same way),
 * and removes only a lock it has read as stale: only breakers remove a lock they do not hold, so
 * none can have replaced it in between. The breaker is held for a moment only; a stale one needs a
 * crash inside that moment, and is removed once its pid is dead (two processes doing that at the
 * same moment is the one race left).
 */
export function breakStaleLock(path: string, stale: LockStaleness): boolean {
  const breaker = `${path}.break`;
  if (!createLockFile(breaker, String(process.pid))) {
    if (isStale(breaker, pidLockStale(10_000)) === true) rmSync(breaker, { force: true });
    return false;
  }
  try {
    // Gone: nothing to remove (removing now could take the lock another process has just made).
    const verdict = isStale(path, stale);
    if (verdict === undefined) return true;
    if (!verdict) return false;
    rmSync(path, { force: true });
    return true;
  } finally {
    rmSync(breaker, { force: true });
  }
}
