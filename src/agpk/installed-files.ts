import { lstatSync } from 'node:fs';
import { join } from 'node:path';

import { breather, sha256File } from './digests.ts';
import type { FileStamp, InstalledPackage } from './registry.ts';

/** What changed in an install folder since install: files whose content differs, files gone. */
export interface InstalledChanges {
  changed: string[];
  missing: string[];
}

/** The stamp of a file as `stampFile` records it, or undefined when it is not a file any more. */
export function stampFile(path: string): FileStamp | undefined {
  try {
    const s = lstatSync(path);
    return s.isFile() ? { size: s.size, mtime_ms: s.mtimeMs, ctime_ms: s.ctimeMs } : undefined;
  } catch {
    return undefined;
  }
}

const sameStamp = (a: FileStamp, b: FileStamp) =>
  a.size === b.size && a.mtime_ms === b.mtime_ms && a.ctime_ms === b.ctime_ms;

/**
 * Checks every installed file of `pkg` against the sha256 recorded at install, hashing only the
 * files whose size, mtime or ctime differ from the stamp recorded with it (ctime cannot be set
 * back by `touch`, so an edit that keeps size and mtime is still hashed), the files in
 * `alwaysHash`, and every file of a record without stamps (installed by an older Plaza). A file
 * only touched or chmod-ed hashes the same and is not changed. Files the package made itself
 * after install (not in the record) are not looked at. See
 * docs/decisions/agpk.md, "An install hook may add files, not change the package's own".
 */
export async function installedChanges(
  pkg: Pick<InstalledPackage, 'install_dir' | 'files' | 'file_stats'>,
  alwaysHash: readonly string[] = [],
): Promise<InstalledChanges> {
  const changed: string[] = [];
  const missing: string[] = [];
  const pause = breather();
  for (const [path, sha256] of Object.entries(pkg.files)) {
    const full = join(pkg.install_dir, path);
    const now = stampFile(full);
    if (now === undefined) {
      missing.push(path);
      continue;
    }
    const recorded = pkg.file_stats?.[path];
    if (recorded !== undefined && sameStamp(recorded, now) && !alwaysHash.includes(path)) continue;
    if ((await sha256File(full)) !== sha256) changed.push(path);
    await pause(now.size);
  }
  return { changed, missing };
}
