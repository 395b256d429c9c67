/**
 * The market's scan, run on a package before it is published: what the source worker's inspector
 * checks of an archive, then the open-source scan of its files. `plaza agpk validate` and `pack`
 * run it so that a publisher sees the findings the worker would reject the package for.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';

import type { SourceFinding } from '../../probes/index.ts';
import { AgpkError, type AgpkManifest, type ExtractLimits, MANIFEST_FILE, withPackageDir } from '../agpk/index.ts';
import { scanArchive, scanPackageDir } from './scan.ts';

async function sha256Of(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/**
 * The archive-level findings (setuid/setgid bits, the archive's digest on the deny-list); an
 * archive tar cannot read is itself a high finding, as the worker records it.
 */
export async function archiveFindings(
  archive: string,
  denyList: ReadonlyMap<string, string>,
): Promise<SourceFinding[]> {
  return scanArchive(archive, await sha256Of(archive), denyList).catch((error: unknown): SourceFinding[] => [
    {
      id: 'archive.unsafe',
      severity: 'high',
      file: null,
      message: `not a readable tar archive: ${(error as Error).message}`,
    },
  ]);
}

/**
 * The manifest as the scan reads it (its hooks, its license): agpk.json when it is a JSON object,
 * whether or not it passes the schema (validate reports that), else none.
 */
async function manifestOf(dir: string): Promise<AgpkManifest | undefined> {
  try {
    const value = JSON.parse(await readFile(join(dir, MANIFEST_FILE), 'utf8')) as unknown;
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as AgpkManifest) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Scans a package folder or archive as the market's worker does once the package passes its
 * command-surface gate: for an archive, the archive-level checks, then (extracted safely to a
 * temporary folder) the scan of its files; for a folder, the scan of its files. The findings carry
 * the worker's rule ids and messages; a `high` one makes the worker reject the package.
 */
export async function scanPackageTarget(
  target: string,
  options: { denyList: ReadonlyMap<string, string>; limits?: ExtractLimits },
): Promise<SourceFinding[]> {
  const st = await stat(target).catch(() => undefined);
  if (!st) throw new AgpkError('not_found', `${target} does not exist`);
  if (st.isDirectory()) return scanPackageDir(target, await manifestOf(target), options.denyList);
  const findings = await archiveFindings(target, options.denyList);
  try {
    return await withPackageDir(
      target,
      async (dir) => [...findings, ...(await scanPackageDir(dir, await manifestOf(dir), options.denyList))],
      options.limits,
    );
  } catch (error) {
    // An archive that cannot be unpacked safely is a finding, as in the worker; a full disk is not.
    if (!(error instanceof AgpkError) || error.code !== 'bad_request') throw error;
    return [...findings, { id: 'archive.unsafe', severity: 'high', file: null, message: error.message }];
  }
}
