/**
 * Pins that the package scan gets through each adversarial input (test/support/adversarial-hooks.ts)
 * at the 4 MiB it reads of a file: quadratic or worse rules took minutes on them (a scan runs
 * inside the server, on publisher text), the linear ones about a second. The time taken is the
 * benchmark's (bench/scan.ts, against an older tree in one invocation); here a generous timeout only catches
 * a rule that has gone super-linear again.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { loadDenyList, scanPackageDir } from '../../src/sources/index.ts';
import { ADVERSARIAL_CASES } from '../support/adversarial-hooks.ts';

const MiB = 1024 * 1024;
const deny = loadDenyList(undefined);
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'scan-linear-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Scans a package holding a license and `content` (at most what the scan reads of a file) at `file`. */
async function scan(file: string, content: string): Promise<void> {
  expect(Buffer.byteLength(content)).toBeLessThanOrEqual(4 * MiB);
  const pkg = await mkdtemp(join(dir, 'pkg-'));
  await writeFile(join(pkg, 'LICENSE'), 'MIT');
  await mkdir(dirname(join(pkg, file)), { recursive: true });
  await writeFile(join(pkg, file), content);
  await scanPackageDir(pkg, undefined, deny);
  await rm(pkg, { recursive: true, force: true });
}

describe('scanPackageDir on adversarial input', () => {
  it.each(ADVERSARIAL_CASES)('gets through 4 MiB of %s', async (_what, file, make) => {
    await scan(file, make(4 * MiB));
  }, 30_000);
});
