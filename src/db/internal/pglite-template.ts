import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { PGlite } from '@electric-sql/pglite';

const require = createRequire(import.meta.url);

/** The installed PGlite's version (its package.json is not exported, so walk up from its entry). */
function pgliteVersion(): string {
  let dir = dirname(require.resolve('@electric-sql/pglite'));
  for (let i = 0; i < 4; i++) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest)) {
      const pkg = JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string; version?: string };
      if (pkg.name === '@electric-sql/pglite' && pkg.version) return pkg.version;
    }
    dir = dirname(dir);
  }
  return 'unknown';
}

function cacheDir(): string {
  const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
  const preferred = join(repoRoot, 'node_modules', '.cache', 'plaza');
  try {
    mkdirSync(preferred, { recursive: true });
    return preferred;
  } catch {
    const fallback = join(tmpdir(), 'plaza-cache');
    mkdirSync(fallback, { recursive: true });
    return fallback;
  }
}

/**
 * A gzip'd freshly initialised PGlite data folder. initdb costs ~5 s on these machines; loading
 * this template costs well under 1 s, so new databases (first start, each test) start fast. Built
 * once per PGlite version (at `npm install`, or on first use) and cached under node_modules/.cache.
 */
export async function pgliteTemplate(): Promise<Blob> {
  const path = join(cacheDir(), `pglite-template-${pgliteVersion()}.tar.gz`);
  if (existsSync(path)) return new Blob([readFileSync(path)]);
  const db = await PGlite.create('memory://');
  const dump = await db.dumpDataDir('gzip');
  await db.close();
  const bytes = Buffer.from(await dump.arrayBuffer());
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, bytes);
  renameSync(tmp, path);
  return new Blob([bytes]);
}
