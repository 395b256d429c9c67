/**
 * The local AGPK registry's lock: one operation at a time per AGPK_HOME, also when several
 * installers find the lock of a crashed one at the same moment, and a lock left without a holder
 * (a crash while it was being written) does not block the registry for good. Taking the lock
 * sweeps folders the registry does not list, and never one it lists, also when AGPK_HOME is
 * reached through another path than at install time.
 */
import { spawnSync } from 'node:child_process';
import { access, mkdir, symlink, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { createRegistry, type InstalledPackage } from '../../src/agpk/index.ts';
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
    await expect(createRegistry(home, { lockTimeoutMs: 300 }).locked(async () => 'ran')).rejects.toThrow(
      /another agpk operation holds/,
    );
    const old = new Date(Date.now() - 60_000);
    await utimes(lock, old, old);
    await expect(createRegistry(home, { lockTimeoutMs: 300 }).locked(async () => 'ran')).resolves.toBe('ran');
  });

  it('waits for a live holder and then fails with a conflict', async () => {
    const home = join(tmp.path, 'home');
    await mkdir(home, { recursive: true });
    await writeFile(join(home, 'registry.lock'), String(process.pid));
    await expect(createRegistry(home, { lockTimeoutMs: 300 }).locked(async () => 'ran')).rejects.toThrow(
      /another agpk operation holds/,
    );
  });

  it('keeps the installed packages when AGPK_HOME is reached through a symlink, and sweeps an unlisted version', async () => {
    const home = join(tmp.path, 'home');
    const installed = join(home, 'packages', 'acme.tool', '1.0.0');
    await mkdir(installed, { recursive: true });
    await writeFile(join(installed, 'agpk.json'), '{}');
    await mkdir(join(home, 'packages', 'acme.tool', '0.9.0'), { recursive: true });
    const record = { package_id: 'acme.tool', version: '1.0.0', install_dir: installed } as InstalledPackage;
    await createRegistry(home).write({ registry_version: 1, packages: { 'acme.tool': record } });
    const link = join(tmp.path, 'link-home');
    await symlink(home, link);

    await createRegistry(link).locked(async () => {});

    await expect(access(join(installed, 'agpk.json'))).resolves.toBeUndefined();
    await expect(access(join(home, 'packages', 'acme.tool', '0.9.0'))).rejects.toThrow();
  });
});
