import { mkdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';

import { breakStaleLock, createLockFile, pidLockStale } from '../kernel/index.ts';
import { AgpkError } from './errors.ts';
import { writeFileAtomic } from './internal/atomic-write.ts';
import { removeLeftovers } from './leftovers.ts';
import type { AgentCommand, Lifecycle } from './manifest.ts';

/** One installed package as the local registry records it. */
export interface InstalledPackage {
  package_id: string;
  name: string;
  version: string;
  description: string | null;
  install_dir: string;
  installed_at: string;
  source: { kind: 'file' | 'market'; uri: string; sha256: string };
  signature: { signed: boolean; trusted: boolean; kid: string | null };
  depends: string[];
  conflicts: string[];
  lifecycle: Lifecycle;
  /** sha256 of every installed file, by path relative to install_dir. */
  files: Record<string, string>;
  /** Size and times of every installed file as staged, so `invoke` hashes only what moved (absent in records of an older Plaza). */
  file_stats?: Record<string, FileStamp>;
  commands: AgentCommand[];
}

/** What `invoke` compares before hashing a file again: its size, mtime and ctime (ms). */
export interface FileStamp {
  size: number;
  mtime_ms: number;
  ctime_ms: number;
}

/** The registry file. */
export interface RegistryData {
  registry_version: 1;
  packages: Record<string, InstalledPackage>;
}

/** The local registry under AGPK_HOME: `registry.json`, `packages/<id>/<version>/`, `tmp/`, `trusted-keys/`. */
export interface Registry {
  home: string;
  packagesDir: string;
  tmpDir: string;
  trustedKeysDir: string;
  read(): Promise<RegistryData>;
  /** Replaces the registry file atomically (temp file, fsync, rename, fsync folder). */
  write(data: RegistryData): Promise<void>;
  /**
   * Runs `fn` holding the registry lock, so two installers never interleave. Taking the lock first
   * removes what a dead operation left (tmp files, unregistered install folders; see leftovers.ts).
   */
  locked<T>(fn: () => Promise<T>): Promise<T>;
}

/** The lock of a dead installer is stale; one naming no pid (an older Plaza's, cut short) after 10 s. */
const staleLock = pidLockStale(10_000);

/**
 * Installed packages by id with no prototype: a package id such as `constructor` or `toString`
 * would otherwise find Object.prototype's members, and pass for installed.
 */
function byId(packages: RegistryData['packages']): RegistryData['packages'] {
  return Object.assign(Object.create(null) as RegistryData['packages'], packages);
}

/** Opens (creating folders as needed) the registry in `home`. */
export function createRegistry(home: string, options: { lockTimeoutMs?: number } = {}): Registry {
  const file = join(home, 'registry.json');
  const lockFile = join(home, 'registry.lock');
  const lockTimeoutMs = options.lockTimeoutMs ?? 30_000;
  const packagesDir = join(home, 'packages');
  const tmpDir = join(home, 'tmp');
  const ensure = async (): Promise<void> => {
    await mkdir(packagesDir, { recursive: true });
    await mkdir(tmpDir, { recursive: true });
  };
  const read = async (): Promise<RegistryData> => {
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch {
      return { registry_version: 1, packages: byId({}) };
    }
    try {
      const data = JSON.parse(text) as RegistryData;
      if (data.registry_version !== 1 || typeof data.packages !== 'object' || data.packages === null)
        throw new Error('unknown registry_version');
      return { ...data, packages: byId(data.packages) };
    } catch (error) {
      throw new AgpkError('internal', `the local registry ${file} is unreadable: ${(error as Error).message}`, {
        cause: error,
      });
    }
  };
  return {
    home,
    packagesDir,
    tmpDir,
    trustedKeysDir: join(home, 'trusted-keys'),
    read,
    async write(data) {
      await ensure();
      await writeFileAtomic(file, `${JSON.stringify(data, null, 2)}\n`);
    },
    async locked(fn) {
      await ensure();
      const deadline = Date.now() + lockTimeoutMs;
      while (!createLockFile(lockFile, String(process.pid))) {
        if (breakStaleLock(lockFile, staleLock)) continue;
        if (Date.now() > deadline) throw new AgpkError('conflict', `another agpk operation holds ${lockFile}`);
        await new Promise((r) => setTimeout(r, 100));
      }
      try {
        // An unreadable registry is `fn`'s to report; then nothing is swept.
        const data = await read().catch(() => undefined);
        if (data) await removeLeftovers({ tmpDir, packagesDir }, data);
        return await fn();
      } finally {
        await rm(lockFile, { force: true });
      }
    },
  };
}
