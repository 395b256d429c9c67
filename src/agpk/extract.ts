import { createHash, type Hash } from 'node:crypto';
import { createReadStream, createWriteStream, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { join, posix } from 'node:path';
import { finished } from 'node:stream/promises';

import { Parser, type ReadEntry } from 'tar';

import { SMALL_FILE } from './digests.ts';
import { AgpkError } from './errors.ts';

/** Limits that keep a hostile archive from exhausting the disk or the inode table. */
export interface ExtractLimits {
  /** Largest declared size of one file. */
  maxFileBytes: number;
  /** Largest sum of declared file sizes. */
  maxTotalBytes: number;
  /** Most entries (files, directories, links). */
  maxEntries: number;
}

/** Defaults: 1 GiB per file, 2 GiB in all, 50,000 entries. */
export const DEFAULT_EXTRACT_LIMITS: ExtractLimits = {
  maxFileBytes: 1024 ** 3,
  maxTotalBytes: 2 * 1024 ** 3,
  maxEntries: 50_000,
};

/** What was extracted. */
export interface ExtractResult {
  entries: number;
  bytes: number;
  /** sha256 (hex) of the archive file as read (hashed during the first pass). */
  sha256: string;
}

export function reject(message: string): AgpkError {
  return new AgpkError('bad_request', `unsafe archive: ${message}`, { problems: [{ file: '(archive)', path: '', message }] });
}

/** Normalises an entry path, refusing absolute paths, `..`, NUL and empty names. */
function safePath(raw: string): string {
  if (raw.includes('\0')) throw reject(`entry name contains a NUL byte`);
  if (raw.startsWith('/') || raw.startsWith('\\') || /^[A-Za-z]:/.test(raw)) throw reject(`absolute path "${raw}"`);
  if (raw.split(/[\\/]/).includes('..')) throw reject(`path "${raw}" contains ".."`);
  const normal = posix.normalize(raw).replace(/\/+$/, '');
  if (normal === '' || normal === '.') throw reject(`empty entry name`);
  return normal.replace(/^\.\//, '');
}

/** What the entry checks remember across one archive. */
export interface ScanState {
  seen: Set<string>;
  symlinks: Set<string>;
  entries: number;
  total: number;
}

/** What an entry is, once checked. */
export type Action = { kind: 'dir' | 'file' | 'symlink'; path: string; parts: string[]; mode: number; link?: string };

/** A fresh scan state. */
export const newScanState = (): ScanState => ({ seen: new Set(), symlinks: new Set(), entries: 0, total: 0 });

/** Checks one entry against every rule and the limits; returns what extracting it means. */
export function inspect(entry: ReadEntry, state: ScanState, limits: ExtractLimits): Action {
  const path = safePath(entry.path);
  state.entries += 1;
  if (state.entries > limits.maxEntries) throw reject(`more than ${limits.maxEntries} entries`);
  if (state.seen.has(path)) throw reject(`duplicate entry "${path}"`);
  state.seen.add(path);
  const parts = path.split('/');
  for (let i = 1; i < parts.length; i++) {
    if (state.symlinks.has(parts.slice(0, i).join('/'))) throw reject(`"${path}" is written through the symbolic link "${parts.slice(0, i).join('/')}"`);
  }
  switch (entry.type) {
    case 'Directory':
      return { kind: 'dir', path, parts, mode: 0o755 };
    case 'File':
    case 'OldFile':
    case 'ContiguousFile':
      if (entry.size > limits.maxFileBytes) throw reject(`"${path}" declares ${entry.size} bytes, over the ${limits.maxFileBytes}-byte file limit`);
      state.total += entry.size;
      if (state.total > limits.maxTotalBytes) throw reject(`content exceeds ${limits.maxTotalBytes} bytes`);
      // setuid/setgid/sticky and group/other write bits are dropped: 0755 when executable, else 0644.
      return { kind: 'file', path, parts, mode: (entry.mode ?? 0o644) & 0o111 ? 0o755 : 0o644 };
    case 'SymbolicLink': {
      const link = entry.linkpath ?? '';
      if (link.startsWith('/') || /^[A-Za-z]:/.test(link)) throw reject(`symbolic link "${path}" points to the absolute path "${link}"`);
      const resolved = posix.normalize(posix.join(posix.dirname(path), link));
      if (resolved === '..' || resolved.startsWith('../')) throw reject(`symbolic link "${path}" -> "${link}" leaves the package root`);
      if (resolved.split('/').some((_, i, all) => state.symlinks.has(all.slice(0, i + 1).join('/')))) {
        throw reject(`symbolic link "${path}" -> "${link}" goes through another link`);
      }
      state.symlinks.add(path);
      return { kind: 'symlink', path, parts, mode: 0o777, link };
    }
    case 'Link':
      throw reject(`hard link "${path}" (hard links are not allowed)`);
    case 'CharacterDevice':
    case 'BlockDevice':
      throw reject(`device file "${path}"`);
    case 'FIFO':
      throw reject(`FIFO "${path}"`);
    default:
      throw reject(`unsupported entry type ${entry.type} for "${path}"`);
  }
}

/** Streams the archive through tar's parser, calling `onEntry` for each entry; a throw aborts. */
export async function parseArchive(archive: string, onEntry: (entry: ReadEntry) => void, hash?: Hash): Promise<void> {
  const parser = new Parser({ strict: true, maxDecompressionRatio: Number.POSITIVE_INFINITY } as ConstructorParameters<typeof Parser>[0]);
  const input = createReadStream(archive, { highWaterMark: 1 << 20 });
  if (hash) input.on('data', (chunk) => hash.update(chunk as Buffer));
  let failure: unknown;
  parser.on('entry', (entry: ReadEntry) => {
    if (failure !== undefined) {
      entry.resume();
      return;
    }
    try {
      onEntry(entry);
    } catch (error) {
      entry.resume();
      failure = error;
      parser.abort(error instanceof Error ? error : new Error(String(error)));
    }
  });
  try {
    await new Promise<void>((resolve, reject_) => {
      parser.on('error', (error: Error) => reject_(failure ?? reject(error.message)));
      parser.on('abort', (error: Error) => reject_(failure ?? reject(error.message)));
      parser.on('end', () => resolve());
      input.on('error', reject_);
      input.pipe(parser as unknown as NodeJS.WritableStream);
    });
  } finally {
    input.destroy();
  }
  if (failure !== undefined) throw failure;
}

/**
 * Extracts a (gzipped) tar archive into `dest`, which must not exist yet, refusing anything unsafe:
 * absolute paths, `..`, links leaving the root or hard links, devices and FIFOs, duplicate
 * entries, and archives past `limits`. A first pass checks every header (declared sizes and the
 * entry count included) without writing anything; only a clean archive is then written.
 * setuid/setgid/sticky bits are dropped; modes become 0644 or 0755. On failure `dest` is removed.
 */
export async function safeExtract(archive: string, dest: string, limits: ExtractLimits = DEFAULT_EXTRACT_LIMITS): Promise<ExtractResult> {
  const scan: ScanState = { seen: new Set(), symlinks: new Set(), entries: 0, total: 0 };
  const hash = createHash('sha256');
  await parseArchive(
    archive,
    (entry) => {
      inspect(entry, scan, limits);
      entry.resume();
    },
    hash,
  );
  const sha256 = hash.digest('hex');
  if (scan.entries === 0) throw reject('the archive holds no entries');

  await mkdir(dest, { recursive: false });
  const state: ScanState = { seen: new Set(), symlinks: new Set(), entries: 0, total: 0 };
  const writes: Promise<unknown>[] = [];
  try {
    await parseArchive(archive, (entry) => {
      const action = inspect(entry, state, limits);
      const target = join(dest, ...action.parts);
      if (action.kind === 'dir') {
        mkdirSync(target, { recursive: true, mode: 0o755 });
        entry.resume();
        return;
      }
      mkdirSync(join(dest, ...action.parts.slice(0, -1)), { recursive: true, mode: 0o755 });
      if (action.kind === 'symlink') {
        symlinkSync(action.link!, target);
        entry.resume();
        return;
      }
      if (entry.size <= SMALL_FILE) {
        // Small files are collected and written in one call: far cheaper than a stream per file.
        const chunks: Buffer[] = [];
        entry.on('data', (c: Buffer) => chunks.push(c));
        writes.push(
          new Promise<void>((resolve, reject_) => {
            entry.on('end', () => {
              try {
                writeFileSync(target, Buffer.concat(chunks), { flag: 'wx', mode: action.mode });
                resolve();
              } catch (error) {
                reject_(error as Error);
              }
            });
          }),
        );
        return;
      }
      const out = createWriteStream(target, { flags: 'wx', mode: action.mode });
      entry.pipe(out);
      writes.push(finished(out));
    });
    await Promise.all(writes);
  } catch (error) {
    await Promise.allSettled(writes);
    await rm(dest, { recursive: true, force: true });
    throw error;
  }
  return { entries: state.entries, bytes: state.total, sha256 };
}
