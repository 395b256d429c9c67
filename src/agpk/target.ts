import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import type { AgpkSchemas } from './contract.ts';
import { DIGESTS_FILE, MANIFEST_FILE } from './digests.ts';
import { AgpkError } from './errors.ts';
import { DEFAULT_EXTRACT_LIMITS, type ExtractLimits, type ExtractResult, safeExtract } from './extract.ts';
import { packPackage, readManifest, writeDigests } from './pack.ts';
import { archiveView, folderView } from './package-view.ts';
import { loadPrivateKey, signDigests } from './signing.ts';
import { validatePackage, type ValidationReport } from './validate.ts';

/**
 * Runs `fn` on a package folder: `target` itself (`archive` undefined), or an archive extracted
 * (safely) to a temp folder, with what extracting found (entries, bytes, the archive's sha256).
 */
export async function withPackageDir<T>(
  target: string,
  fn: (dir: string, archive: ExtractResult | undefined) => Promise<T>,
  limits: ExtractLimits = DEFAULT_EXTRACT_LIMITS,
): Promise<T> {
  const st = await stat(target).catch(() => undefined);
  if (!st) throw new AgpkError('not_found', `${target} does not exist`);
  if (st.isDirectory()) return fn(target, undefined);
  const tmp = await mkdtemp(join(tmpdir(), 'agpk-'));
  try {
    const extracted = await safeExtract(target, join(tmp, 'pkg'), limits);
    return await fn(join(tmp, 'pkg'), extracted);
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}

/**
 * Validates a package folder or archive; an archive's report carries its sha256. An archive is
 * read in one streaming pass with the extraction safety checks, without writing it out.
 */
export async function validateTarget(
  target: string,
  schemas: AgpkSchemas,
  limits?: ExtractLimits,
): Promise<ValidationReport & { sha256?: string }> {
  try {
    const st = await stat(target).catch(() => undefined);
    if (!st) throw new AgpkError('not_found', `${target} does not exist`);
    const { view, sha256 } = st.isDirectory()
      ? { view: folderView(target), sha256: undefined }
      : await archiveView(target, limits);
    const report = await validatePackage(view, schemas);
    delete report.manifest;
    delete report.commands;
    return sha256 === undefined ? report : { ...report, sha256 };
  } catch (error) {
    if (error instanceof AgpkError && error.code === 'bad_request' && error.problems.length > 0) {
      return {
        ok: false,
        package_id: null,
        version: null,
        signed: false,
        signature_kid: null,
        problems: error.problems,
        warnings: [],
      };
    }
    throw error;
  }
}

/**
 * Signs a package folder (or archive, which is repacked in place): sets `ahcp.signed`, rewrites
 * DIGESTS, signs it with the Ed25519 key and records the JWS in `ahcp.signature`.
 */
export async function signTarget(
  target: string,
  keyPath: string,
): Promise<{ kid: string; archive?: { path: string; sha256: string } }> {
  const key = await loadPrivateKey(keyPath);
  const signDir = async (dir: string): Promise<string> => {
    const manifest = await readManifest(dir);
    manifest.ahcp = { surface: null, badge: null, ...manifest.ahcp, signed: true, signature: null };
    await writeFile(join(dir, MANIFEST_FILE), `${JSON.stringify(manifest, null, 2)}\n`);
    await writeDigests(dir);
    const { signature, kid } = await signDigests(await readFile(join(dir, DIGESTS_FILE)), key);
    manifest.ahcp.signature = signature;
    await writeFile(join(dir, MANIFEST_FILE), `${JSON.stringify(manifest, null, 2)}\n`);
    return kid;
  };
  return withPackageDir(target, async (dir, archive) => {
    const kid = await signDir(dir);
    if (!archive) return { kid };
    const packed = await packPackage(dir, { output: target });
    return { kid, archive: { path: packed.archive, sha256: packed.sha256 } };
  });
}

export type { ValidationReport };
