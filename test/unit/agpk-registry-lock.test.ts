/**
 * The local AGPK registry's lock: one operation at a time per AGPK_HOME, also when several
 * installers find the lock of a crashed one at the same moment, and a lock left without a holder
 * (a crash while it was being written) does not block the registry for good.
 */
import { spawnSync } from 'node:child_process';
import { mkdir, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { createRegistry } from '../../src/agpk/index.ts';
import { tempDir } from '../support/agpk.ts';

let tmp: Awaited<ReturnType<typeof tempDir>>;

beforeEach(async () => {
  tmp = await tempDir('agpk-lock-');
});
afterEach(async () => {
  await tmp.dispose();
});

/** The pid of a process that has exited. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', '0']);
  return child.pid!;
}

/** Runs `count` lockers at once; returns the most that were inside their critical section together. */
async function mostInsideAtOnce(home: string, count: number): Promise<number> {
  let inside = 0;
  let most = 0;
  await Promise.all(
    Array.from({ length: count }, () =>
      createRegistry(home).locked(async () => {
        inside += 1;
        most = Math.max(most, inside);
        await new Promise((r) => setTimeout(r, 5));
        inside -= 1;
      }),
    ),
  );
  return most;
}

describe('the AGPK registry lock', () => {
  it('lets one of several installers take over the lock of a crashed one, never two', async () => {
    const home = join(tmp.path, 'home');
    await mkdir(home, { recursive: true });
    const stale = deadPid();
    for (let round = 0; round < 6; round += 1) {
      await writeFile(join(home, 'registry.lock'), String(stale));
      expect(await mostInsideAtOnce(home, 5)).toBe(1);
    }
  });

  it('breaks a lock that names no holder once it is old, and waits for a fresh one', async () => {
    const home = join(tmp.path, 'home');
    await mkdir(home, { recursive: true });
    const lock = join(home, 'registry.lock');
    await writeFile(lock, '');
    await expect(createRegistry(home, { lockTimeoutMs: 300 }).locked(async () => 'ran')).rejects.toThrow(/another agpk operation holds/);
    const old = new Date(Date.now() - 60_000);
    await utimes(lock, old, old);
    await expect(createRegistry(home, { lockTimeoutMs: 300 }).locked(async () => 'ran')).resolves.toBe('ran');
  });

  it('waits for a live holder and then fails with a conflict', async () => {
    const home = join(tmp.path, 'home');
    await mkdir(home, { recursive: true });
    await writeFile(join(home, 'registry.lock'), String(process.pid));
    await expect(createRegistry(home, { lockTimeoutMs: 300 }).locked(async () => 'ran')).rejects.toThrow(/another agpk operation holds/);
  });
});
