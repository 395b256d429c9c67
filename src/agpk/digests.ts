import { createHash } from 'node:crypto';
import { createReadStream, readFileSync, statSync } from 'node:fs';
import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';

import { AgpkError } from './errors.ts';

/** The digests file of a package (spec §2.9), in `sha256sum` format. */
export const DIGESTS_FILE = 'DIGESTS';
/** The manifest file of a package (spec §2.8). */
export const MANIFEST_FILE = 'agpk.json';

/** A file of a package tree, by its path relative to the root ('/' separated). */
export interface TreeEntry {
  path: string;
  kind: 'file' | 'dir';
  /** Permission bits as found on disk. */
  mode: number;
  size: number;
}

/**
 * Lists a package tree, sorted by path (byte order), directories before their content.
 * Symbolic links, devices and other special files are refused: packages hold plain files.
 */
export async function walkTree(root: string, exclude: (rel: string) => boolean = () => false): Promise<TreeEntry[]> {
  const out: TreeEntry[] = [];
  async function visit(rel: string): Promise<void> {
    const names = (await readdir(join(root, rel))).sort();
    const paths = names.map((name) => (rel === '' ? name : `${rel}/${name}`)).filter((p) => !exclude(p));
    const stats = await Promise.all(paths.map((p) => lstat(join(root, p))));
    const dirs: string[] = [];
    paths.forEach((path, i) => {
      const st = stats[i]!;
      if (st.isDirectory()) {
        out.push({ path, kind: 'dir', mode: st.mode & 0o7777, size: 0 });
        dirs.push(path);
      } else if (st.isFile()) {
        out.push({ path, kind: 'file', mode: st.mode & 0o7777, size: st.size });
      } else {
        throw new AgpkError(
          'bad_request',
          `${path}: only regular files and directories may be packed (found a link or special file)`,
        );
      }
    });
    for (const d of dirs) await visit(d);
  }
  await visit('');
  const keys = new Map(out.map((e) => [e, Buffer.from(e.path)]));
  return out.sort((a, b) => Buffer.compare(keys.get(a)!, keys.get(b)!));
}

/** sha256 (hex) of a file: read whole when small, streamed otherwise. */
export async function sha256File(path: string): Promise<string> {
  const hash = createHash('sha256');
  // Small files in one synchronous read: for thousands of small files the thread-pool round
  // trips of async reads (open, fstat, read, close each) cost 5-7x the reading itself. Callers
  // that loop over many files let the event loop in with a `breather`.
  const { size } = statSync(path);
  if (size <= SMALL_FILE) return hash.update(readFileSync(path)).digest('hex');
  for await (const chunk of createReadStream(path, { highWaterMark: 1 << 20 })) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/**
 * For loops of synchronous small-file reads: call with the bytes just handled; every `everyBytes`
 * it waits one turn of the event loop, so a server validating a large package keeps answering.
 */
export function breather(everyBytes = 8 << 20): (bytes: number) => Promise<void> | undefined {
  let since = 0;
  return (bytes) => {
    since += bytes;
    if (since < everyBytes) return undefined;
    since = 0;
    return new Promise((resolve) => setImmediate(resolve));
  };
}

/** Files up to this size are read whole rather than streamed. */
export const SMALL_FILE = 4 * 1024 * 1024;

function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const keys = Object.keys(value).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/**
 * Digest of the manifest as DIGESTS records it: sha256 of its canonical JSON (sorted keys, no
 * spaces) with `ahcp.signature` removed, so signing (which writes that field) does not change it.
 */
export function manifestDigest(manifest: Record<string, unknown>): string {
  const copy = structuredClone(manifest);
  const ahcp = copy.ahcp;
  if (ahcp !== null && typeof ahcp === 'object' && !Array.isArray(ahcp))
    delete (ahcp as Record<string, unknown>).signature;
  return createHash('sha256').update(canonical(copy)).digest('hex');
}

/** Formats DIGESTS: one `<sha256>  <path>` line per file, sorted by path. */
export function formatDigests(digests: Map<string, string>): string {
  const paths = [...digests.keys()].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
  return paths.map((p) => `${digests.get(p)!}  ${p}\n`).join('');
}

/** Parses DIGESTS; malformed lines are reported by line number. */
export function parseDigests(text: string): { digests: Map<string, string>; errors: string[] } {
  const digests = new Map<string, string>();
  const errors: string[] = [];
  text.split('\n').forEach((line, i) => {
    if (line === '') return;
    const m = /^([0-9a-f]{64}) [ *](.+)$/.exec(line);
    if (!m) errors.push(`line ${i + 1}: expected "<64 hex sha256>  <path>"`);
    else if (digests.has(m[2]!)) errors.push(`line ${i + 1}: ${m[2]!} listed twice`);
    else digests.set(m[2]!, m[1]!);
  });
  return { digests, errors };
}
