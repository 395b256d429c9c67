/**
 * The open-source scan of a package made of a license and the given files, as `id@file:line`
 * strings: the shape the hook readings' tests compare (which rule, at which line).
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

import type { SourceFinding } from '../../probes/index.ts';
import type { AgpkManifest } from '../../src/agpk/index.ts';
import { loadDenyList, scanPackageDir } from '../../src/sources/index.ts';

const deny = loadDenyList(undefined);

/** Scans a package of LICENSE and `files` (path → content); the folder is removed afterwards. */
export async function scanFindings(files: Record<string, string>, manifest?: AgpkManifest): Promise<string[]> {
  return (await scanDetailed(files, manifest)).map((f) => `${f.id}@${f.file}`);
}

/** {@link scanFindings} as the scan answers them (severity and message too). */
export async function scanDetailed(files: Record<string, string>, manifest?: AgpkManifest): Promise<SourceFinding[]> {
  const dir = await mkdtemp(join(tmpdir(), 'scan-pkg-'));
  try {
    await writeFile(join(dir, 'LICENSE'), 'MIT');
    for (const [path, content] of Object.entries(files)) {
      await mkdir(dirname(join(dir, path)), { recursive: true });
      await writeFile(join(dir, path), content);
    }
    return await scanPackageDir(dir, manifest, deny);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** The findings of an INSTALL hook of these lines as `id:severity@INSTALL:n` (line n of `lines` is INSTALL:n+1). */
export async function installSeverities(...lines: string[]): Promise<string[]> {
  return (await scanDetailed({ INSTALL: ['#!/bin/sh', ...lines, ''].join('\n') })).map(
    (f) => `${f.id}:${f.severity}@${f.file}`,
  );
}

/** The findings of an INSTALL hook of these lines (after `#!/bin/sh`, so line n of `lines` is INSTALL:n+1). */
export function installFindings(...lines: string[]): Promise<string[]> {
  return scanFindings({ INSTALL: ['#!/bin/sh', ...lines, ''].join('\n') });
}
