/**
 * Pins `plaza serve`'s WebAssembly policy (src/app/wasm-policy.ts) in a child Node: with
 * `--trace-wasm-compilation-times` V8 names the compiler of every function it compiles, so the test
 * reads which compiler ran a hot function, not what Plaza meant to set.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

import { describe, expect, it } from 'vitest';

import { applyWasmPolicy } from '../../src/app/wasm-policy.ts';

const policy = fileURLToPath(new URL('../../src/app/wasm-policy.ts', import.meta.url));

// (func (export "f") (param i32) (result i32) (local i32)): sums n, n-1, …, 1 in a loop.
const SUM_MODULE = [
  '0061736d 01000000', // magic, version
  '01 06 01 60 01 7f 01 7f', // type: (i32) -> i32
  '03 02 01 00', // function 0 has type 0
  '07 05 01 01 66 00 00', // export "f"
  '0a 23 01 21 01 01 7f', // code: one body of 33 bytes, one i32 local
  '02 40 03 40 20 00 45 0d 01', // block, loop, br_if (n == 0) out
  '20 01 20 00 6a 21 01', // sum += n
  '20 00 41 01 6b 21 00', // n -= 1
  '0c 00 0b 0b 20 01 0b', // continue; end; end; return sum
]
  .join('')
  .replaceAll(' ', '');

/** The compilers V8 names for the function, in a Node that applies `tier` and then runs it hot. */
function compilersOfHotFunction(tier: string, nodeFlags: string[] = []): { compilers: string[]; applied: string } {
  const script = `
    const { applyWasmPolicy } = await import(${JSON.stringify(policy)});
    const applied = applyWasmPolicy(${JSON.stringify(tier)}, true);
    const module = new WebAssembly.Module(Buffer.from(${JSON.stringify(SUM_MODULE)}, 'hex'));
    const { f } = new WebAssembly.Instance(module).exports;
    let sum = 0;
    for (let i = 0; i < 200; i++) sum = f(100000);
    await new Promise((resolve) => setTimeout(resolve, 200));
    console.log('applied=' + applied + ' sum=' + sum);
  `;
  const env = { ...process.env };
  delete env['NODE_OPTIONS'];
  const run = spawnSync(
    process.execPath,
    ['--trace-wasm-compilation-times', ...nodeFlags, '--input-type=module', '-e', script],
    { encoding: 'utf8', env },
  );
  expect(run.status, run.stderr).toBe(0);
  // The module ran: 100000 · 100001 / 2, wrapped to 32 bits.
  expect(run.stdout).toContain('sum=705082704');
  const compilers = [...run.stdout.matchAll(/Compiled function \S+ using (\w+)/g)].map((m) => m[1]!);
  return { compilers, applied: /applied=(\S+)/.exec(run.stdout)?.[1] ?? '' };
}

describe('applyWasmPolicy', () => {
  it("keeps a hot function on V8's baseline compiler", () => {
    const { compilers, applied } = compilersOfHotFunction('baseline');
    expect(applied).toBe('baseline');
    expect(compilers).toContain('Liftoff');
    expect(compilers).not.toContain('TurboFan');
  });

  it("leaves V8's tiering alone when optimizing, so the hot function is optimised", () => {
    const { compilers, applied } = compilersOfHotFunction('optimizing');
    expect(applied).toBe('undefined');
    expect(compilers).toContain('TurboFan');
  });

  it("gives way to a tiering flag on node's command line", () => {
    const { compilers, applied } = compilersOfHotFunction('baseline', ['--wasm-tier-up']);
    expect(applied).toBe('undefined');
    expect(compilers).toContain('TurboFan');
  });

  it('picks the baseline compiler for auto on embedded storage only', () => {
    expect(applyWasmPolicy('auto', false, ['--liftoff'])).toBeUndefined();
    expect(applyWasmPolicy('optimizing', true, [])).toBeUndefined();
    expect(applyWasmPolicy('auto', true, ['--no-liftoff-only'])).toBeUndefined();
    expect(applyWasmPolicy('baseline', true, ['--nowasm_dynamic_tiering'])).toBeUndefined();
    expect(applyWasmPolicy('auto', false, [])).toBeUndefined();
  });
});
