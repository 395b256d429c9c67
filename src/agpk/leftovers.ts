import { readdir, rm, rmdir } from 'node:fs/promises';
import { join } from 'node:path';

import type { RegistryData } from './registry.ts';

/**
 * Removes what an operation that died without cleaning up left in AGPK_HOME: everything in
 * `tmpDir` (downloads, staging folders), and install folders under `packagesDir` that the
 * registry does not list (a crash between moving a package in place and the registry write, or
 * after an upgrade's write and before the old folder went). Only call it holding the registry
 * lock: every operation that writes there holds it, so nothing found belongs to a live one.
 */
export async function removeLeftovers(paths: { tmpDir: string; packagesDir: string }, data: RegistryData): Promise<string[]> {
  const removed: string[] = [];
  for (const name of await readdir(paths.tmpDir).catch(() => [])) {
    await rm(join(paths.tmpDir, name), { recursive: true, force: true });
    removed.push(join(paths.tmpDir, name));
  }
  const registered = new Set(Object.values(data.packages).map((p) => p.install_dir));
  for (const id of await readdir(paths.packagesDir).catch(() => [])) {
    const idDir = join(paths.packagesDir, id);
    for (const version of await readdir(idDir).catch(() => [])) {
      const dir = join(idDir, version);
      if (registered.has(dir)) continue;
      await rm(dir, { recursive: true, force: true });
      removed.push(dir);
    }
    await rmdir(idDir).catch(() => {});
  }
  return removed;
}
