import { createHash, type Hash } from 'node:crypto';
import { createReadStream, createWriteStream, mkdirSync, writeFileSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { join, posix } from 'node:path';
import type { Readable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { createGunzip, type Gunzip } from 'node:zlib';

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
  /** Paths in lower case: two names that differ only in case collide on macOS and Windows. */
  folded: Set<string>;
  files: Set<string>;
  /** Directories, named by an entry or implied by a path inside them. */
  dirs: Set<string>;
  entries: number;
  total: number;
}

/** What an entry is, once checked. */
export type Action = { kind: 'dir' | 'file'; path: string; parts: string[]; mode: number };

/** A fresh scan state. */
export const newScanState = (): ScanState => ({ seen: new Set(), folded: new Set(), files: new Set(), dirs: new Set(), entries: 0, total: 0 });

/** Checks one entry against every rule and the limits; returns what extracting it means. */
export function inspect(entry: ReadEntry, state: ScanState, limits: ExtractLimits): Action {
  const path = safePath(entry.path);
  state.entries += 1;
  if (state.entries > limits.maxEntries) throw reject(`more than ${limits.maxEntries} entries`);
  if (state.seen.has(path)) throw reject(`duplicate entry "${path}"`);
  state.seen.add(path);
  const folded = path.toLowerCase();
  if (state.folded.has(folded)) throw reject(`"${path}" differs from another entry only in case`);
  state.folded.add(folded);
  const parts = path.split('/');
  for (let i = 1; i < parts.length; i++) {
    const parent = parts.slice(0, i).join('/');
    if (state.files.has(parent)) throw reject(`"${path}" is inside "${parent}", which is a file`);
    state.dirs.add(parent);
  }
  switch (entry.type) {
    case 'Directory':
      state.dirs.add(path);
      return { kind: 'dir', path, parts, mode: 0o755 };
    case 'File':
    case 'OldFile':
    case 'ContiguousFile':
      if (state.dirs.has(path)) throw reject(`"${path}" is both a directory and a file`);
      state.files.add(path);
      if (entry.size > limits.maxFileBytes) throw reject(`"${path}" declares ${entry.size} bytes, over the ${limits.maxFileBytes}-byte file limit`);
      state.total += entry.size;
      if (state.total > limits.maxTotalBytes) throw reject(`content exceeds ${limits.maxTotalBytes} bytes`);
      // setuid/setgid/sticky and group/other write bits are dropped: 0755 when executable, else 0644.
      return { kind: 'file', path, parts, mode: (entry.mode ?? 0o644) & 0o111 ? 0o755 : 0o644 };
    case 'SymbolicLink':
      // Packages hold regular files and directories only (`plaza agpk pack` refuses links). A link,
      // even one inside the root, let a later entry or a file read walk out of the package.
      throw reject(`symbolic link "${path}" (packages hold no links)`);
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

/**
 * Streams the archive through tar's parser, calling `onEntry` for each entry; a throw aborts.
 * A gzipped archive is inflated here (zlib, in 16 KiB steps), not by tar: at the end-of-archive
 * blocks inflating stops, so data appended after them (padding, or a gzip bomb that tar would
 * inflate, buffer and recopy) costs nothing. The file is still read to its end when hashed.
 */
export async function parseArchive(archive: string, onEntry: (entry: ReadEntry) => void, hash?: Hash): Promise<void> {
  const parser = new Parser({ strict: true });
  const input = createReadStream(archive, { highWaterMark: 1 << 20 });
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
  let gunzip: Gunzip | undefined;
  let feeding = true;
  const stopFeeding = () => {
    if (!feeding) return;
    feeding = false;
    gunzip?.destroy();
    // Not inside the write that found the end: the parser finishes that write first.
    setImmediate(() => parser.end());
    if (hash) input.resume();
    else input.destroy();
  };
  const feed = (source: Readable) => {
    source.on('data', (chunk: Buffer) => {
      if (!feeding || parser.write(chunk)) return;
      source.pause();
      parser.once('drain', () => source.resume());
    });
  };
  parser.on('eof', stopFeeding);
  try {
    await new Promise<void>((resolve, reject_) => {
      let parsed = false;
      let read = !hash;
      const settle = () => parsed && read && resolve();
      parser.on('error', (error: Error) => reject_(failure ?? reject(error.message)));
      parser.on('abort', (error: Error) => reject_(failure ?? reject(error.message)));
      parser.on('end', () => ((parsed = true), settle()));
      let first = true;
      input.on('data', (chunk) => {
        const bytes = chunk as Buffer;
        hash?.update(bytes);
        if (first) {
          first = false;
          if (bytes[0] === 0x1f && bytes[1] === 0x8b) {
            gunzip = createGunzip({ chunkSize: 1024 * 1024 });
            gunzip.on('error', (error: Error) => feeding && reject_(reject(`not a readable gzip stream: ${error.message}`)));
            gunzip.on('end', stopFeeding);
            feed(gunzip);
          }
        }
        if (!feeding) return;
        if (gunzip) {
          if (!gunzip.write(bytes)) {
            input.pause();
            gunzip.once('drain', () => input.resume());
          }
        } else if (!parser.write(bytes)) {
          input.pause();
          parser.once('drain', () => input.resume());
        }
      });
      input.on('end', () => {
        read = true;
        if (gunzip && feeding) gunzip.end();
        else stopFeeding();
        settle();
      });
      input.on('error', reject_);
    });
  } finally {
    input.destroy();
    gunzip?.destroy();
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
  const scan = newScanState();
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
  const state = newScanState();
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
