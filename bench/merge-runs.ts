/**
 * `BENCH_RUNS=3 npm run bench -- gateway chat`: each benchmark runs that many times in a row and
 * its saved result is the median of the runs, figure by figure (issue 36: where this machine's
 * noise keeps one run inconclusive, three runs' medians decide). The runs' own results are kept
 * under `per_run`, so the summary can show each run's value beside the median.
 */
import { median } from './lib.ts';

type Json = unknown;

/** The figure-by-figure median of `runs`: numbers by median, booleans all-true, the rest from the first run. */
export function medianOf(runs: Json[]): Json {
  const first = runs[0];
  if (runs.every((r) => typeof r === 'number' && Number.isFinite(r))) {
    const m = median(runs as number[]);
    // Integers stay integers (counts, µs); fractions keep three decimals.
    return (runs as number[]).every(Number.isInteger) ? Math.round(m) : Number(m.toFixed(3));
  }
  if (runs.every((r) => typeof r === 'boolean')) return runs.every(Boolean);
  if (runs.every((r) => Array.isArray(r) && r.length === (first as Json[]).length))
    return (first as Json[]).map((_, i) => medianOf(runs.map((r) => (r as Json[])[i])));
  if (runs.every((r) => r !== null && typeof r === 'object' && !Array.isArray(r))) {
    const keys = new Set(runs.flatMap((r) => Object.keys(r as object)));
    const out: Record<string, Json> = {};
    for (const key of keys) {
      const present = runs.map((r) => (r as Record<string, Json>)[key]).filter((v) => v !== undefined);
      out[key] = present.length === runs.length ? medianOf(present) : present[0];
    }
    return out;
  }
  return first;
}

/** Runs `bench` `runs` times; one run's figures as they are, several runs' medians with `per_run`. */
export async function runRepeated(
  bench: () => Promise<Record<string, unknown>>,
  runs: number,
  onRun: (n: number) => void = () => undefined,
): Promise<Record<string, unknown>> {
  const results: Record<string, unknown>[] = [];
  for (let n = 1; n <= runs; n++) {
    onRun(n);
    results.push({ run_started: new Date().toISOString(), ...(await bench()) });
  }
  if (runs === 1) return results[0]!;
  return { ...(medianOf(results) as Record<string, unknown>), runs, per_run: results };
}
