import { createHash, type Hash } from 'node:crypto';
import { createReadStream, createWriteStream, mkdirSync, writeFileSync, type WriteStream } from 'node:fs';
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
  return new AgpkError('bad_request', `unsafe archive: ${message}`, {
    problems: [{ file: '(archive)', path: '', message }],
  });
}

/**
 * Longest name of one path component, in bytes: NAME_MAX of ext4, XFS, btrfs and ZFS. A PAX header
 * lets a tar entry carry any length; the write of a longer one fails with ENAMETOOLONG.
 */
export const MAX_NAME_BYTES = 255;
/**
 * Longest entry path, in bytes: macOS allows 1024 for a whole path, and under Linux's 4096 this
 * leaves room for the folder a package is extracted into.
 */
export const MAX_PATH_BYTES = 1024;

/** A path as messages show it: a PAX name may be a megabyte long, and messages are stored and mailed. */
const shown = (path: string): string => (path.length > 80 ? `${path.slice(0, 80)}…` : path);

/** Normalises an entry path, refusing absolute paths, `..`, NUL, empty and over-long names. */
function safePath(raw: string): string {
  if (raw.includes('\0')) throw reject(`entry name contains a NUL byte`);
  if (raw.startsWith('/') || raw.startsWith('\\') || /^[A-Za-z]:/.test(raw))
    throw reject(`absolute path "${shown(raw)}"`);
  if (raw.split(/[\\/]/).includes('..')) throw reject(`path "${shown(raw)}" contains ".."`);
  const normal = posix.normalize(raw).replace(/\/+$/, '');
  if (normal === '' || normal === '.') throw reject(`empty entry name`);
  const path = normal.replace(/^\.\//, '');
  if (Buffer.byteLength(path) > MAX_PATH_BYTES)
    throw reject(`the path "${shown(path)}" is over ${MAX_PATH_BYTES} bytes long`);
  const long = path.split('/').find((part) => Buffer.byteLength(part) > MAX_NAME_BYTES);
  if (long !== undefined)
    throw reject(
      `"${shown(path)}" has a name of ${Buffer.byteLength(long)} bytes, over the ${MAX_NAME_BYTES} a file system holds`,
    );
  return path;
}

/** What the entry checks remember across one archive. */
export interface ScanState {
  seen: Set<string>;
  /**
   * Paths in lower case and Unicode NFC: two names that differ only in case, or in how an accent is
   * encoded, are one file on macOS (and the first in case on Windows).
   */
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
export const newScanState = (): ScanState => ({
  seen: new Set(),
  folded: new Set(),
  files: new Set(),
  dirs: new Set(),
  entries: 0,
  total: 0,
});

/** Checks one entry against every rule and the limits; returns what extracting it means. */
export function inspect(entry: ReadEntry, state: ScanState, limits: ExtractLimits): Action {
  const path = safePath(entry.path);
  state.entries += 1;
  if (state.entries > limits.maxEntries) throw reject(`more than ${limits.maxEntries} entries`);
  if (state.seen.has(path)) throw reject(`duplicate entry "${path}"`);
  state.seen.add(path);
  const folded = path.normalize('NFC').toLowerCase();
  if (state.folded.has(folded)) throw reject(`"${path}" differs from another entry only in case or Unicode form`);
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
      if (entry.size > limits.maxFileBytes)
        throw reject(`"${path}" declares ${entry.size} bytes, over the ${limits.maxFileBytes}-byte file limit`);
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
 * Aborting `stop` ends the parse with its reason (work an entry started failed later).
 */
export async function parseArchive(
  archive: string,
  onEntry: (entry: ReadEntry) => void,
  hash?: Hash,
  stop?: AbortSignal,
): Promise<void> {
  if (stop?.aborted) throw stop.reason;
  const parser = new Parser({ strict: true });
  const input = createReadStream(archive, { highWaterMark: 1 << 20 });
  let failure: unknown;
  const onStop = () => {
    if (failure !== undefined) return;
    failure = stop!.reason;
    parser.abort(failure instanceof Error ? failure : new Error(String(failure)));
  };
  stop?.addEventListener('abort', onStop, { once: true });
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
            gunzip.on(
              'error',
              (error: Error) => feeding && reject_(reject(`not a readable gzip stream: ${error.message}`)),
            );
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
    stop?.removeEventListener('abort', onStop);
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
export async function safeExtract(
  archive: string,
  dest: string,
  limits: ExtractLimits = DEFAULT_EXTRACT_LIMITS,
): Promise<ExtractResult> {
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
  // A write is watched from the moment it starts: the first failure stops the parse. A write
  // that failed while later entries were still read, with nobody awaiting it yet, once ended the
  // whole process (issue 31).
  const stop = new AbortController();
  const fail = (path: string, error: unknown) => {
    if (!stop.signal.aborted) stop.abort(writeFailure(path, error));
  };
  const streams = new Set<WriteStream>();
  const writes: Promise<void>[] = [];
  try {
    await parseArchive(
      archive,
      (entry) => {
        const action = inspect(entry, state, limits);
        const target = join(dest, ...action.parts);
        try {
          mkdirSync(action.kind === 'dir' ? target : join(dest, ...action.parts.slice(0, -1)), {
            recursive: true,
            mode: 0o755,
          });
        } catch (error) {
          throw writeFailure(action.path, error);
        }
        if (action.kind === 'dir') {
          entry.resume();
          return;
        }
        if (entry.size <= SMALL_FILE) {
          // Small files are collected and written in one call: far cheaper than a stream per file.
          const chunks: Buffer[] = [];
          entry.on('data', (c: Buffer) => chunks.push(c));
          entry.on('end', () => {
            try {
              writeFileSync(target, Buffer.concat(chunks), { flag: 'wx', mode: action.mode });
            } catch (error) {
              fail(action.path, error);
            }
          });
          return;
        }
        const out = createWriteStream(target, { flags: 'wx', mode: action.mode });
        streams.add(out);
        entry.pipe(out);
        writes.push(
          finished(out).then(
            () => void streams.delete(out),
            (error: unknown) => fail(action.path, error),
          ),
        );
      },
      undefined,
      stop.signal,
    );
    await Promise.all(writes);
    if (stop.signal.aborted) throw stop.signal.reason;
  } catch (error) {
    // An aborted parse may never end the entry a stream was fed from: the streams are cut, so
    // their watchers (which never reject) settle.
    for (const out of streams) out.destroy();
    await Promise.all(writes);
    await rm(dest, { recursive: true, force: true });
    throw error;
  }
  return { entries: state.entries, bytes: state.total, sha256 };
}

/** fs error codes that an entry's own name or place causes: the archive is at fault, not the machine. */
const ENTRY_ERRORS = new Set(['ENAMETOOLONG', 'EILSEQ', 'EINVAL', 'EEXIST', 'ENOTDIR', 'EISDIR', 'ELOOP']);

/**
 * An entry that could not be written: a name the file system refuses is an unsafe archive
 * (`bad_request`, like every other refusal); a full disk or a missing permission is the
 * machine's (`internal`), so a package source is not blamed for it.
 */
function writeFailure(path: string, error: unknown): AgpkError {
  if (error instanceof AgpkError) return error;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && ENTRY_ERRORS.has(code)) {
    const message = `"${shown(path)}" cannot be written on this file system (${code})`;
    return new AgpkError('bad_request', `unsafe archive: ${message}`, {
      problems: [{ file: '(archive)', path: '', message }],
      cause: error,
    });
  }
  return new AgpkError(
    'internal',
    `extracting "${shown(path)}" failed: ${error instanceof Error ? error.message : String(error)}`,
    { cause: error },
  );
}
