/**
 * Pins `plaza serve`'s heap policy (src/app/heap-policy.ts) in a child Node: after a full
 * collection V8 names the growing factor it chose (`--trace-gc-verbose`), so the test reads what
 * V8 actually uses, not what Plaza meant to set.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

import { describe, expect, it } from 'vitest';

import { applyHeapPolicy } from '../../src/app/heap-policy.ts';

const policy = fileURLToPath(new URL('../../src/app/heap-policy.ts', import.meta.url));

/** The factors V8 reports after one full collection in a Node started with `nodeFlags`. */
function factorsAfterGc(percent: number, nodeFlags: string[] = []): { factors: number[]; applied: string } {
  const script = `
    const { applyHeapPolicy } = await import(${JSON.stringify(policy)});
    const applied = applyHeapPolicy(${percent});
    const kept = Array.from({ length: 50000 }, (_, i) => ({ i }));
    globalThis.gc();
    console.log('applied=' + applied + ' kept=' + kept.length);
  `;
  const run = spawnSync(
    process.execPath,
    ['--expose-gc', '--trace-gc-verbose', ...nodeFlags, '--input-type=module', '-e', script],
    { encoding: 'utf8' },
  );
  expect(run.status, run.stderr).toBe(0);
  const factors = [...run.stdout.matchAll(/\[HeapController\] factor ([\d.]+)/g)].map((m) => Number(m[1]));
  return { factors, applied: /applied=(\S+)/.exec(run.stdout)?.[1] ?? '' };
}

describe('applyHeapPolicy', () => {
  it('sets the old generation to grow by the given percentage between full collections', () => {
    const { factors, applied } = factorsAfterGc(30);
    expect(applied).toBe('30');
    expect(factors.length).toBeGreaterThan(0);
    expect(factors.every((f) => f === 1.3)).toBe(true);
  });

  it.each([Number.NaN, 0.5, -10])('sets nothing for %s, a value that is no whole positive percentage', (percent) => {
    expect(applyHeapPolicy(percent, [])).toBeUndefined();
  });

  it("leaves V8's own choice at 0", () => {
    const { factors, applied } = factorsAfterGc(0);
    expect(applied).toBe('undefined');
    expect(factors.length).toBeGreaterThan(0);
    expect(factors.some((f) => f === 1.3)).toBe(false);
  });

  it("gives way to a --heap-growing-percent on node's command line", () => {
    const { factors, applied } = factorsAfterGc(30, ['--heap-growing-percent=50']);
    expect(applied).toBe('undefined');
    expect(factors.every((f) => f === 1.5)).toBe(true);
  });
});
