/**
 * Which of V8's WebAssembly compilers the serving process uses, set by the process that serves.
 *
 * V8 runs WebAssembly with its baseline compiler (Liftoff) first and recompiles hot functions with
 * its optimising one. On embedded storage PGlite's hot functions are PostgreSQL compiled to
 * WebAssembly, and one of them costs the optimising compiler ~600 MB of working memory for about a
 * second: a server on embedded storage went from ~250 MB to 820–960 MB resident whenever that
 * function got hot (at start-up, or in the first probe round). With the baseline compiler only,
 * the same probe round peaks near 300 MB (bench/README.md, "2026-11-29, night").
 *
 * The flags are read when V8 compiles a module, so setting them before PGlite is opened takes
 * effect for PGlite (and for undici's HTTP parser and Prisma's query compiler, compiled later
 * still); a module compiled before them would keep its tiering. V8 derives two flags from
 * `--liftoff-only` only at start-up, so all three are set. A node command line that names any of
 * them, in any of V8's spellings, wins.
 */
import { setFlagsFromString } from 'node:v8';

import type { Config } from '../../config/index.ts';

export type WasmTier = Config['wasmTier'];

const BASELINE_FLAGS = ['--liftoff-only', '--no-wasm-tier-up', '--no-wasm-dynamic-tiering'];
const NAMED_ON_COMMAND_LINE = /^--(no-?)?(liftoff[-_]only|liftoff|wasm[-_]tier[-_]up|wasm[-_]dynamic[-_]tiering)(=|$)/;

/**
 * Applies PLAZA_WASM_TIER (`tier`; `auto` is `baseline` on embedded storage, else `optimizing`)
 * unless node's command line names one of the flags. Returns the tier Plaza set, else undefined.
 */
export function applyWasmPolicy(
  tier: WasmTier,
  embeddedStorage: boolean,
  execArgv: readonly string[] = process.execArgv,
): 'baseline' | undefined {
  const wanted = tier === 'auto' ? (embeddedStorage ? 'baseline' : 'optimizing') : tier;
  if (wanted !== 'baseline' || execArgv.some((arg) => NAMED_ON_COMMAND_LINE.test(arg))) return undefined;
  for (const flag of BASELINE_FLAGS) setFlagsFromString(flag);
  return 'baseline';
}
