import { readdir, rm, rmdir } from 'node:fs/promises';
import { join } from 'node:path';

import type { RegistryData } from './registry.ts';

/**
 * Removes what an operation that died without cleaning up left in AGPK_HOME: everything in
 * `tmpDir` (downloads, staging folders), and install folders under `packagesDir` that the
 * registry does not list (a crash between moving a package in place and the registry write, or
 * after an upgrade's write and before the old folder went). Only call it holding the registry
 * lock: every operation that writes there holds it, so nothing found belongs to a live one.
 *
 * A folder is registered when the registry lists its `<package id>/<version>`, whatever
 * `install_dir` says: AGPK_HOME reached through another path than at install time (a symlinked
 * home, another XDG_DATA_HOME naming the same folder, a moved folder) must not read as "nothing
 * installed" and delete every package.
 */
export async function removeLeftovers(
  paths: { tmpDir: string; packagesDir: string },
  data: RegistryData,
): Promise<string[]> {
  const removed: string[] = [];
  for (const name of await readdir(paths.tmpDir).catch(() => [])) {
    await rm(join(paths.tmpDir, name), { recursive: true, force: true });
    removed.push(join(paths.tmpDir, name));
  }
  const registered = new Set(Object.entries(data.packages).map(([id, p]) => `${id}/${p.version}`));
  for (const id of await readdir(paths.packagesDir).catch(() => [])) {
    const idDir = join(paths.packagesDir, id);
    for (const version of await readdir(idDir).catch(() => [])) {
      const dir = join(idDir, version);
      if (registered.has(`${id}/${version}`)) continue;
      await rm(dir, { recursive: true, force: true });
      removed.push(dir);
    }
    await rmdir(idDir).catch(() => {});
  }
  return removed;
}
