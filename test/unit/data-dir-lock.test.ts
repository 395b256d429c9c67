/** Pins the embedded data folder's single-owner lock. */
import { mkdtempSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { acquireDataDirLock, DataDirLockedError, readLockOwner } from '../../src/db/index.ts';
import { startChild } from '../support/children.ts';

describe('acquireDataDirLock', () => {
  it('refuses a folder whose lock is held by a live process', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'plaza-lock-'));
    const child = startChild(process.execPath, ['-e', 'setTimeout(() => {}, 30000)']);
    try {
      writeFileSync(join(dir, 'plaza.lock'), JSON.stringify({ pid: child.pid, startedAt: 'then' }));
      expect(readLockOwner(dir)?.pid).toBe(child.pid);
      expect(() => acquireDataDirLock(dir)).toThrow(DataDirLockedError);
    } finally {
      child.kill();
    }
  });

  it('takes over a stale lock of a dead process and releases it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'plaza-lock-'));
    writeFileSync(join(dir, 'plaza.lock'), JSON.stringify({ pid: 2 ** 22 + 12345, startedAt: 'then' }));
    const release = acquireDataDirLock(dir);
    release();
    expect(readLockOwner(dir)).toBeUndefined();
    acquireDataDirLock(dir)();
  });
});

describe('acquireDataDirLock against a lock being written', () => {
  it('does not take over a lock file that exists but names no owner yet', () => {
    // Another process has created the file and not yet written its pid into it.
    const dir = mkdtempSync(join(tmpdir(), 'plaza-lock-'));
    writeFileSync(join(dir, 'plaza.lock'), '');
    expect(() => acquireDataDirLock(dir)).toThrow(/Could not take the lock/);
    expect(readFileSync(join(dir, 'plaza.lock'), 'utf8')).toBe('');
  });

  it('takes over a lock that names no owner once it is old (a crash while it was written)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'plaza-lock-'));
    writeFileSync(join(dir, 'plaza.lock'), '');
    const old = new Date(Date.now() - 60_000);
    utimesSync(join(dir, 'plaza.lock'), old, old);
    acquireDataDirLock(dir)();
  });
});
