import { join } from 'node:path';

import { sha256File } from './digests.ts';
import { AgpkError } from './errors.ts';
import type { Registry } from './registry.ts';

/** Result of re-hashing one installed package. */
export interface InstalledCheck {
  package_id: string;
  version: string;
  ok: boolean;
  checked: number;
  changed: string[];
  missing: string[];
}

/** Re-hashes the files of installed packages (all, or one) against the sha256 recorded at install. */
export async function verifyInstalled(registry: Registry, packageId?: string): Promise<InstalledCheck[]> {
  const { packages } = await registry.read();
  if (packageId !== undefined && !packages[packageId])
    throw new AgpkError('not_found', `${packageId} is not installed`);
  const out: InstalledCheck[] = [];
  for (const p of Object.values(packages).sort((a, b) => a.package_id.localeCompare(b.package_id))) {
    if (packageId !== undefined && p.package_id !== packageId) continue;
    const changed: string[] = [];
    const missing: string[] = [];
    for (const [path, sha] of Object.entries(p.files)) {
      const actual = await sha256File(join(p.install_dir, path)).catch(() => undefined);
      if (actual === undefined) missing.push(path);
      else if (actual !== sha) changed.push(path);
    }
    out.push({
      package_id: p.package_id,
      version: p.version,
      ok: changed.length === 0 && missing.length === 0,
      checked: Object.keys(p.files).length,
      changed,
      missing,
    });
  }
  return out;
}
