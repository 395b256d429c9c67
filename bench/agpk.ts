/**
 * AGPK (issue 7): pack + validate of a 10,000-file, 200 MB package (random bytes, so gzip finds
 * nothing to squeeze; target <= 5 s), and sha256 throughput of AGPK's hashing against the system
 * `sha256sum` on the same ~500 MB file in the same run (target >= 80%). AGPK hashes local archives
 * and installed files with `sha256File`, and downloads with `downloadArchive` (hash while writing);
 * both are timed, the download over HTTPS from a local server (so it also pays TLS and the write).
 * Also times pack's phases alone (DIGESTS hashing, tar+gzip) to show where pack's time goes.
 * Run: `node --import tsx bench/agpk.ts`. Env: BENCH_AGPK_FILES (10000), BENCH_AGPK_MB (200),
 * BENCH_HASH_MB (500). Everything is written under os.tmpdir() and removed afterwards.
 */
import { execFileSync } from 'node:child_process';
import { randomFillSync } from 'node:crypto';
import { once } from 'node:events';
import { createReadStream, createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';

import {
  downloadArchive,
  loadAgpkSchemas,
  packPackage,
  scaffoldPackage,
  sha256File,
  validatePackageDir,
  validateTarget,
  writeDigests,
} from '../src/agpk/index.ts';
import { createTestTls } from '../test/support/agpk.ts';
import { saveResult } from './lib.ts';

const FILES = Number(process.env['BENCH_AGPK_FILES'] ?? 10_000);
const TOTAL_MB = Number(process.env['BENCH_AGPK_MB'] ?? 200);
const HASH_MB = Number(process.env['BENCH_HASH_MB'] ?? 500);

async function timed<T>(fn: () => Promise<T>): Promise<[T, number]> {
  const started = performance.now();
  const value = await fn();
  return [value, performance.now() - started];
}

/** A scaffolded package plus FILES random files (sizes spread around the mean) in 100 folders. */
async function makePackage(dir: string): Promise<number> {
  await scaffoldPackage(dir, { id: 'bench.big', name: 'Bench big', version: '1.0.0' });
  const mean = Math.floor((TOTAL_MB * 1024 * 1024) / FILES);
  let total = 0;
  for (let d = 0; d < 100; d++) await mkdir(join(dir, 'payload', 'data', `d${d}`), { recursive: true });
  const writes: Promise<void>[] = [];
  for (let i = 0; i < FILES; i++) {
    // Sizes spread evenly from 0 to 2x the mean; random bytes throughout (incompressible).
    const size = Math.floor((((i * 7919) % 1000) / 999) * 2 * mean);
    const bytes = randomFillSync(Buffer.allocUnsafe(size));
    total += size;
    writes.push(writeFile(join(dir, 'payload', 'data', `d${i % 100}`, `f${i}.bin`), bytes));
    if (writes.length >= 64) await Promise.all(writes.splice(0));
  }
  await Promise.all(writes);
  return total;
}

/** pack's tar+gzip phase alone, at a given gzip level (or none), to show what gzip costs. */
async function gzipOnly(archive: string, level: number | null): Promise<number> {
  const [, ms] = await timed(async () => {
    const source = createReadStream(archive.replace(/\.agpk$/, '.tar'));
    if (level === null) await pipeline(source, createWriteStream(`${archive}.raw`));
    else await pipeline(source, createGzip({ level }), createWriteStream(`${archive}.gz${level}`));
  });
  return ms;
}

async function benchPack(root: string): Promise<Record<string, unknown>> {
  const dir = join(root, 'pkg');
  const [bytes, genMs] = await timed(() => makePackage(dir));
  const schemas = loadAgpkSchemas();
  const archive = join(root, 'bench.big-1.0.0.agpk');
  const [packed, packMs] = await timed(() => packPackage(dir, { output: archive }));
  const [archiveReport, validateArchiveMs] = await timed(() => validateTarget(archive, schemas));
  const [dirReport, validateDirMs] = await timed(() => validatePackageDir(dir, schemas));
  // Where pack's time goes: DIGESTS alone (walk + sha256 of every file), then the archive's own
  // bytes through gzip at pack's level 1, at 6, and a plain copy (the I/O floor).
  const [, digestsMs] = await timed(() => writeDigests(dir));
  execFileSync('sh', ['-c', `gzip -dc '${archive}' > '${archive.replace(/\.agpk$/, '.tar')}'`]);
  const gzip1Ms = await gzipOnly(archive, 1);
  const gzip6Ms = await gzipOnly(archive, 6);
  const copyMs = await gzipOnly(archive, null);
  return {
    files: FILES,
    payload_mb: Number((bytes / 2 ** 20).toFixed(1)),
    generate_ms: Math.round(genMs),
    pack_ms: Math.round(packMs),
    validate_archive_ms: Math.round(validateArchiveMs),
    validate_dir_ms: Math.round(validateDirMs),
    pack_plus_validate_ms: Math.round(packMs + validateArchiveMs),
    pack_plus_validate_target_ms: 5000,
    archive_mb: Number((packed.bytes / 2 ** 20).toFixed(1)),
    entries: packed.entries,
    validate_ok: archiveReport.ok && dirReport.ok,
    validate_problems: [...archiveReport.problems, ...dirReport.problems]
      .slice(0, 3)
      .map((p) => `${p.file} ${p.path}: ${p.message}`),
    profile_digests_ms: Math.round(digestsMs),
    profile_gzip_level1_of_tar_ms: Math.round(gzip1Ms),
    profile_gzip_level6_of_tar_ms: Math.round(gzip6Ms),
    profile_copy_of_tar_ms: Math.round(copyMs),
  };
}

async function benchHash(root: string): Promise<Record<string, unknown>> {
  const file = join(root, 'big.bin');
  const chunk = Buffer.allocUnsafe(8 * 2 ** 20);
  const out = createWriteStream(file);
  for (let written = 0; written < HASH_MB * 2 ** 20; written += chunk.length) {
    randomFillSync(chunk);
    if (!out.write(Buffer.from(chunk))) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
  const mb = HASH_MB * (2 ** 20 / 1e6);
  const sha256sum = (): [string, number] => {
    const started = performance.now();
    const digest = execFileSync('sha256sum', [file]).toString().split(' ')[0]!;
    return [digest, performance.now() - started];
  };
  // Warm the page cache, then alternate so drift hits both alike.
  sha256sum();
  const [systemDigest, sys1] = sha256sum();
  const [ownDigest, own1] = await timed(() => sha256File(file));
  const [, sys2] = sha256sum();
  const [, own2] = await timed(() => sha256File(file));
  const systemMs = (sys1 + sys2) / 2;
  const ownMs = (own1 + own2) / 2;

  // The download path: a local HTTPS server streams the file; downloadArchive hashes while writing.
  const tls = await createTestTls();
  const server = createServer({ key: tls.key, cert: tls.cert }, (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/octet-stream' });
    createReadStream(file, { highWaterMark: 1 << 20 }).pipe(res);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const url = `https://localhost:${(server.address() as AddressInfo).port}/big.agpk`;
  let downloadMs: number;
  try {
    const [download, ms] = await timed(() =>
      downloadArchive(url, join(root, 'downloaded.agpk'), {
        ca: tls.caCert,
        expectedSha256: systemDigest,
        maxBytes: 4 * 1024 ** 3,
      }),
    );
    if (download.sha256 !== systemDigest) throw new Error('download digest differs');
    downloadMs = ms;
  } finally {
    server.close();
  }
  return {
    hash_file_mb: Number(mb.toFixed(0)),
    same_digest: ownDigest === systemDigest,
    sha256sum_mb_s: Math.round(mb / (systemMs / 1000)),
    sha256file_mb_s: Math.round(mb / (ownMs / 1000)),
    sha256file_ratio: Number((systemMs / ownMs).toFixed(3)),
    download_https_mb_s: Math.round(mb / (downloadMs / 1000)),
    download_ratio: Number((systemMs / downloadMs).toFixed(3)),
    hash_target_ratio: 0.8,
  };
}

/** Runs the AGPK benchmark and returns its figures. */
export async function benchAgpk(): Promise<Record<string, unknown>> {
  const root = mkdtempSync(join(tmpdir(), 'plaza-bench-agpk-'));
  try {
    const pack = await benchPack(root);
    rmSync(join(root, 'pkg'), { recursive: true, force: true });
    const hash = await benchHash(root);
    const figures = { ...pack, ...hash };
    saveResult('agpk', figures);
    return figures;
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

if (import.meta.main) console.log(JSON.stringify(await benchAgpk(), null, 2));
