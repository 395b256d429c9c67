import { createHash } from 'node:crypto';
import { lstat, readFile } from 'node:fs/promises';
import { join, posix } from 'node:path';

import { DIGESTS_FILE, MANIFEST_FILE, manifestDigest, walkTree } from './digests.ts';
import { AgpkError } from './errors.ts';
import { DEFAULT_EXTRACT_LIMITS, type ExtractLimits, inspect, newScanState, parseArchive, reject } from './extract.ts';
import { treeDigests } from './pack.ts';

/** What a path of a package is. */
export type EntryKind = 'file' | 'dir' | 'other' | 'missing';

/** A package as the validator reads it: a folder on disk, or an archive read in one pass. */
export interface PackageView {
  kind(path: string): Promise<EntryKind>;
  /** A file's bytes; undefined when it is not a file (or, in an archive, not a top-level file). */
  read(path: string): Promise<Buffer | undefined>;
  /**
   * What DIGESTS must say: sha256 of every file but DIGESTS (the manifest by manifestDigest).
   * Throws when the tree holds links or special files, which packages may not.
   */
  digests(): Promise<Map<string, string>>;
}

const NOT_REGULAR = 'only regular files and directories may be packed (found a link or special file)';

/** A package folder. */
export function folderView(dir: string): PackageView {
  return {
    async kind(path) {
      try {
        const st = await lstat(join(dir, path));
        return st.isFile() ? 'file' : st.isDirectory() ? 'dir' : 'other';
      } catch {
        return 'missing';
      }
    },
    read: (path) => readFile(join(dir, path)).catch(() => undefined),
    digests: async () => treeDigests(dir, await walkTree(dir, (p) => p === DIGESTS_FILE)),
  };
}

/** Top-level files up to this size are kept in memory: they are what the validator parses. */
const KEPT_FILE_BYTES = 8 * 1024 * 1024;

/** A path as the archive names it, or undefined when it would leave the package. */
function inside(path: string): string | undefined {
  const normal = posix
    .normalize(path)
    .replace(/^(\.\/)+/, '')
    .replace(/\/+$/, '');
  if (normal === '' || normal === '.') return '';
  return normal.startsWith('../') || normal === '..' || normal.startsWith('/') ? undefined : normal;
}

/**
 * Reads an archive in one streaming pass, writing nothing to disk: every entry passes the same
 * safety checks and limits as `safeExtract` (an unsafe archive throws the same error), every
 * file is hashed as it streams by, and the small top-level files the validator parses are kept.
 * Also returns the sha256 of the archive file itself.
 */
export async function archiveView(
  archive: string,
  limits: ExtractLimits = DEFAULT_EXTRACT_LIMITS,
): Promise<{ view: PackageView; sha256: string }> {
  const kinds = new Map<string, EntryKind>();
  const hashes = new Map<string, string>();
  const kept = new Map<string, Buffer>();
  const state = newScanState();
  const archiveHash = createHash('sha256');
  await parseArchive(
    archive,
    (entry) => {
      const action = inspect(entry, state, limits);
      for (let i = 1; i < action.parts.length; i++) {
        const parent = action.parts.slice(0, i).join('/');
        if (!kinds.has(parent)) kinds.set(parent, 'dir');
      }
      if (action.kind !== 'file') {
        kinds.set(action.path, action.kind === 'dir' ? 'dir' : 'other');
        entry.resume();
        return;
      }
      kinds.set(action.path, 'file');
      const hash = createHash('sha256');
      const keep = action.parts.length === 1 && entry.size <= KEPT_FILE_BYTES;
      const chunks: Buffer[] = [];
      entry.on('data', (chunk: Buffer) => {
        hash.update(chunk);
        if (keep) chunks.push(chunk);
      });
      entry.on('end', () => {
        hashes.set(action.path, hash.digest('hex'));
        if (keep) kept.set(action.path, Buffer.concat(chunks));
      });
    },
    archiveHash,
  );
  if (state.entries === 0) throw reject('the archive holds no entries');
  const view: PackageView = {
    kind: async (path) => {
      const p = inside(path);
      return p === undefined ? 'missing' : p === '' ? 'dir' : (kinds.get(p) ?? 'missing');
    },
    read: async (path) => {
      const p = inside(path);
      return p === undefined ? undefined : kept.get(p);
    },
    digests: async () => {
      const other = [...kinds].find(([, k]) => k === 'other');
      if (other) throw new AgpkError('bad_request', `${other[0]}: ${NOT_REGULAR}`);
      const digests = new Map<string, string>();
      for (const [path, sha] of hashes) {
        if (path === DIGESTS_FILE) continue;
        let digest = sha;
        if (path === MANIFEST_FILE) {
          try {
            digest = manifestDigest(JSON.parse(kept.get(path)?.toString('utf8') ?? '') as Record<string, unknown>);
          } catch {
            // not JSON: its plain sha256, as for a folder
          }
        }
        digests.set(path, digest);
      }
      return digests;
    },
  };
  return { view, sha256: archiveHash.digest('hex') };
}
