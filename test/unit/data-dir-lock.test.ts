/** Pins the embedded data folder's single-owner lock. */
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { acquireDataDirLock, DataDirLockedError, readLockOwner } from '../../src/db/index.ts';

describe('acquireDataDirLock', () => {
  it('refuses a folder whose lock is held by a live process', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'plaza-lock-'));
    const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 30000)']);
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
