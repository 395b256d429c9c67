/**
 * How far V8 lets the old generation grow between full collections, set by the process that serves.
 *
 * Left to itself, V8 lets the old generation grow up to 4× what the last full collection kept
 * before it collects again. Under load a gateway call leaves ~85 KiB of garbage, some of it
 * promoted, so a server with ~45 MB of live objects sat at 130–190 MB of heap and 300–350 MB
 * resident. With 60% (the default) it stays near 235 MB resident at the same CPU per call within
 * the noise; 30% held a little less but cost the chat path ~20% more CPU (bench/README.md,
 * "2026-11-29, evening"). V8 reads the flag each time it sets the next limit, so setting it once
 * the process runs takes effect at the next collection. NODE_OPTIONS may not carry it, so
 * `plaza serve` sets it itself; a `--heap-growing-percent` on node's own command line wins.
 */
import { setFlagsFromString } from 'node:v8';

const FLAG = /^--heap[-_]growing[-_]percent(=|$)/;

/**
 * Applies PLAZA_HEAP_GROWING_PERCENT (`percent`; 0 leaves V8's own heuristic) unless node was
 * started with the flag. Returns the percentage in force when Plaza set it, else undefined.
 */
export function applyHeapPolicy(percent: number, execArgv: readonly string[] = process.execArgv): number | undefined {
  // Not a positive number (an unchecked environment value, say): V8's own heuristic stays.
  if (!Number.isFinite(percent) || percent < 1 || execArgv.some((arg) => FLAG.test(arg))) return undefined;
  setFlagsFromString(`--heap-growing-percent=${Math.trunc(percent)}`);
  return Math.trunc(percent);
}
