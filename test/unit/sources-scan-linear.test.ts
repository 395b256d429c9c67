/**
 * Pins that the package scan is linear in the size of what it reads (it runs inside the server,
 * on publisher text up to 4 MiB a file): for each adversarial input (test/support/adversarial-hooks.ts)
 * a 4 MiB file is scanned, and 4× the input costs under 8× the time (a quadratic rule costs ~16×).
 * Times are compared within one test, the best of two runs each, so machine load does not decide
 * the outcome.
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

/** The best of two scans of a package holding a license and `content` at `file`, in ms. */
async function scanTime(file: string, content: string): Promise<number> {
  const pkg = await mkdtemp(join(dir, 'pkg-'));
  await writeFile(join(pkg, 'LICENSE'), 'MIT');
  await mkdir(dirname(join(pkg, file)), { recursive: true });
  await writeFile(join(pkg, file), content);
  let best = Infinity;
  for (let run = 0; run < 2; run++) {
    const start = performance.now();
    await scanPackageDir(pkg, undefined, deny);
    best = Math.min(best, performance.now() - start);
  }
  await rm(pkg, { recursive: true, force: true });
  return best;
}

describe('scanPackageDir on adversarial input', () => {
  it.each(ADVERSARIAL_CASES)('scans 4 MiB in linear time: %s', async (_what, file, make) => {
    await scanTime(file, make(64 * 1024));
    const small = await scanTime(file, make(MiB));
    const large = await scanTime(file, make(4 * MiB));
    expect(large / Math.max(small, 1)).toBeLessThan(8);
  }, 60_000);
});
