import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream, readFileSync } from 'node:fs';
import { readFile, rename, rm, stat } from 'node:fs/promises';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';

import {
  breather,
  DIGESTS_FILE,
  formatDigests,
  MANIFEST_FILE,
  manifestDigest,
  sha256File,
  SMALL_FILE,
  type TreeEntry,
  walkTree,
} from './digests.ts';
import { AgpkError } from './errors.ts';
import { writeFileAtomic } from './internal/atomic-write.ts';
import { gzipBatches } from './internal/gzip-batches.ts';
import { END_OF_ARCHIVE, padding, ustarHeader } from './internal/ustar.ts';
import type { AgpkManifest } from './manifest.ts';

/**
 * gzip level of archives. Part of the reproducibility contract (same level, same zlib, same bytes);
 * 1 keeps packing fast; batches that do not compress are stored (see gzipBatches).
 */
const GZIP_LEVEL = 1;

/** What `pack` produced. */
export interface PackResult {
  package_id: string;
  version: string;
  archive: string;
  sha256: string;
  bytes: number;
  entries: number;
}

/** Reads and parses `agpk.json`, failing with a precise message when it is absent or not JSON. */
export async function readManifest(dir: string): Promise<AgpkManifest> {
  let text: string;
  try {
    text = await readFile(join(dir, MANIFEST_FILE), 'utf8');
  } catch {
    const isDir = await stat(dir).then(
      (s) => s.isDirectory(),
      () => undefined,
    );
    const message =
      isDir === undefined
        ? `${dir} does not exist`
        : isDir
          ? `${MANIFEST_FILE} is missing in ${dir}: is it a package folder? (\`plaza agpk scaffold\` makes one)`
          : `${dir} is not a folder`;
    throw new AgpkError('bad_request', message, {
      problems: [{ file: MANIFEST_FILE, path: '$', message: 'file is missing' }],
    });
  }
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch (error) {
    const message = `not valid JSON (${(error as Error).message})`;
    throw new AgpkError('bad_request', `${MANIFEST_FILE} is ${message}`, {
      problems: [{ file: MANIFEST_FILE, path: '$', message }],
    });
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    const message = 'not a JSON object';
    throw new AgpkError('bad_request', `${MANIFEST_FILE} is ${message}`, {
      problems: [{ file: MANIFEST_FILE, path: '$', message }],
    });
  }
  return value as AgpkManifest;
}

async function mapLimit<T, R>(items: T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

/**
 * The digests of a package tree as DIGESTS records them: sha256 of every file but DIGESTS itself;
 * the manifest's digest leaves out `ahcp.signature` (see manifestDigest).
 */
export async function treeDigests(dir: string, files: TreeEntry[]): Promise<Map<string, string>> {
  const list = files.filter((f) => f.kind === 'file' && f.path !== DIGESTS_FILE);
  const breathe = breather();
  const hashes = await mapLimit(list, 4, async (f) => {
    let digest: string | undefined;
    if (f.path === MANIFEST_FILE) {
      try {
        digest = manifestDigest(JSON.parse(await readFile(join(dir, f.path), 'utf8')) as Record<string, unknown>);
      } catch {
        // not JSON: hashed as a plain file below
      }
    }
    digest ??= await sha256File(join(dir, f.path));
    await breathe(f.size);
    return digest;
  });
  return new Map(list.map((f, i) => [f.path, hashes[i]!]));
}

/** Writes DIGESTS for the tree in `dir`; returns its text. */
export async function writeDigests(dir: string): Promise<string> {
  const files = await walkTree(dir, (p) => p === DIGESTS_FILE);
  const text = formatDigests(await treeDigests(dir, files));
  await writeFileAtomic(join(dir, DIGESTS_FILE), text);
  return text;
}

async function* tarBlocks(dir: string, entries: TreeEntry[]): AsyncGenerator<Buffer> {
  const breathe = breather();
  for (const e of entries) {
    if (e.kind === 'dir') {
      yield ustarHeader({ path: `${e.path}/`, type: '5', mode: 0o755 });
      continue;
    }
    yield ustarHeader({ path: e.path, type: '0', mode: e.mode & 0o111 ? 0o755 : 0o644, size: e.size });
    let read = 0;
    if (e.size <= SMALL_FILE) {
      // One synchronous read per small file (see sha256File); the event loop gets a turn every 8 MiB.
      await breathe(e.size);
      const body = readFileSync(join(dir, e.path));
      if (body.length !== e.size) throw new AgpkError('conflict', `${e.path} changed while packing`);
      yield body;
      yield padding(e.size);
      continue;
    }
    for await (const chunk of createReadStream(join(dir, e.path), { highWaterMark: 1 << 20 })) {
      read += (chunk as Buffer).length;
      if (read > e.size) break;
      yield chunk as Buffer;
    }
    if (read !== e.size) throw new AgpkError('conflict', `${e.path} changed while packing`);
    yield padding(e.size);
  }
  yield END_OF_ARCHIVE;
}

/** Batches the many small header/body/padding buffers into ~1 MiB chunks: one zlib call each. */
async function* tarStream(dir: string, entries: TreeEntry[]): AsyncGenerator<Buffer> {
  let batch: Buffer[] = [];
  let size = 0;
  for await (const chunk of tarBlocks(dir, entries)) {
    batch.push(chunk);
    size += chunk.length;
    if (size >= 1 << 20) {
      yield Buffer.concat(batch, size);
      batch = [];
      size = 0;
    }
  }
  if (size > 0) yield Buffer.concat(batch, size);
}

/**
 * Packs `dir` into a deterministic `.agpk` (gzipped ustar): writes DIGESTS first, then entries
 * sorted by path with mtime 0, owner root:root (0:0) and modes 0644/0755. Packing an unchanged
 * tree twice yields the same bytes, hence the same sha256 to register in the market.
 */
export async function packPackage(dir: string, options: { output?: string } = {}): Promise<PackResult> {
  const root = resolve(dir);
  const manifest = await readManifest(root);
  if (
    typeof manifest.id !== 'string' ||
    typeof manifest.version !== 'string' ||
    !/^[A-Za-z0-9][A-Za-z0-9._+~-]*$/.test(`${manifest.id}${manifest.version}`)
  ) {
    throw new AgpkError('bad_request', 'agpk.json needs a valid "id" and "version" to pack', {
      problems: [
        {
          file: MANIFEST_FILE,
          path: '$',
          message: 'id and version must be non-empty strings of letters, digits and . _ + ~ -',
        },
      ],
    });
  }
  const output = resolve(options.output ?? join(dirname(root), `${manifest.id}-${manifest.version}.agpk`));
  const outputRel = relative(root, output);
  const inside = !outputRel.startsWith('..') && !outputRel.startsWith(sep);
  await writeDigests(root);
  const entries = await walkTree(
    root,
    (p) => inside && (p === outputRel.split(sep).join('/') || p.startsWith(`${outputRel}.tmp`)),
  );

  const tmp = `${output}.tmp-${process.pid}`;
  const hash = createHash('sha256');
  let bytes = 0;
  const tap = new Transform({
    transform(chunk: Buffer, _enc, cb) {
      hash.update(chunk);
      bytes += chunk.length;
      cb(null, chunk);
    },
  });
  try {
    await pipeline(
      Readable.from(gzipBatches(tarStream(root, entries), { level: GZIP_LEVEL })),
      tap,
      createWriteStream(tmp),
    );
    await rename(tmp, output);
  } catch (error) {
    await rm(tmp, { force: true });
    throw error;
  }
  return {
    package_id: manifest.id,
    version: manifest.version,
    archive: output,
    sha256: hash.digest('hex'),
    bytes,
    entries: entries.length,
  };
}
