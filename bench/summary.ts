/**
 * The summary table of `npm run bench`: one row per target (bench/targets.ts) and variant, with the
 * figure read from the benchmark's result, the target, whether it is met and when it was measured.
 * Benchmarks that did not run in this invocation keep the figures of their last
 * bench/results/<name>.json, marked with that file's own date.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import { ROOT } from './lib.ts';
import { peerTables } from './peer-table.ts';
import { type BenchResult, type Figure, type Target, TARGETS } from './targets.ts';

/** bench/results, or BENCH_RESULTS_DIR (to rebuild the table from another set of results, e.g. the committed one). */
export const RESULTS_DIR = process.env['BENCH_RESULTS_DIR'] ?? join(ROOT, 'bench', 'results');
export const SUMMARY_FILE = join(RESULTS_DIR, 'summary.md');

/** What happened to one benchmark in this invocation. */
export interface BenchRun {
  /** 1-minute load average when it started and when it ended. */
  loadStart: number;
  loadEnd: number;
  /** Its figures with name, date and machine, when it finished. */
  result?: BenchResult;
  /** Why it did not finish. */
  error?: string;
}

/** The invocation the table describes. */
export interface SummaryInput {
  machine: string;
  started: Date;
  finished: Date;
  /** Load averages (1, 5, 15 min) at the start and the end. */
  loadStart: number[];
  loadEnd: number[];
  /** The benchmarks that ran, by name. */
  runs: Map<string, BenchRun>;
}

/** The last saved result of `bench`, if any. */
export function readResult(bench: string): BenchResult | undefined {
  const file = join(RESULTS_DIR, `${bench}.json`);
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as BenchResult) : undefined;
}

function formatNumber(v: number): string {
  const abs = Math.abs(v);
  const digits = abs >= 100 ? 0 : abs >= 10 ? 1 : abs >= 1 ? 2 : 3;
  return String(Number(v.toFixed(digits)));
}

function formatValue(value: number | boolean | undefined, unit: string, target: Target): string {
  if (value === undefined) return 'not in the result';
  if (typeof value === 'boolean') return target.limit === true ? (value ? 'equal' : 'NOT equal') : String(value);
  return unit ? `${formatNumber(value)} ${unit}` : formatNumber(value);
}

function formatTarget(target: Target): string {
  if (typeof target.limit === 'boolean') return 'equal';
  const sign = { '<=': '≤', '<': '<', '>=': '≥', '==': '=' }[target.compare];
  return `${sign} ${target.limit}${target.unit ? ` ${target.unit}` : ''}`;
}

/** Whether `value` meets `target`; undefined when there is no figure to judge. */
export function meets(target: Target, value: number | boolean | undefined): boolean | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'boolean' || typeof target.limit === 'boolean') return value === target.limit;
  switch (target.compare) {
    case '<=':
      return value <= target.limit;
    case '<':
      return value < target.limit;
    case '>=':
      return value >= target.limit;
    case '==':
      return value === target.limit;
  }
}

const day = (iso: unknown) => (typeof iso === 'string' ? `${iso.slice(0, 16).replace('T', ' ')} UTC` : 'unknown date');
const cell = (text: string) => text.replaceAll('|', '\\|').replaceAll('\n', ' ');
const loads = (l: number[]) => l.map((x) => x.toFixed(2)).join(' ');

/** Where a row's figure comes from: this run (with its load) or a kept result (with its date). */
function provenance(run: BenchRun | undefined, result: BenchResult, figure: Figure, usualMachine: string): string {
  const measuredOn = figure.machine ?? result['machine'];
  const elsewhere = typeof measuredOn === 'string' && measuredOn !== usualMachine ? ` on ${measuredOn}` : '';
  const runs = typeof result['runs'] === 'number' ? `median of ${result['runs']} runs, ` : '';
  if (run?.result && !figure.date)
    return `${runs}this run, load ${run.loadStart.toFixed(1)} → ${run.loadEnd.toFixed(1)}${elsewhere}`;
  const savedLoad = Array.isArray(result['load_avg'])
    ? `, load ${Number(result['load_avg'][0]).toFixed(1)} at its end`
    : '';
  const kept = `${runs}kept from ${day(figure.date ?? result['date'])}${figure.date ? '' : savedLoad}${elsewhere}`;
  return run?.error ? `FAILED this run (${run.error}); ${kept}` : kept;
}

/** The same figure in each run a median result was made of (bench/merge-runs.ts), e.g. `runs 1.2 / 1.4 / 1.3`. */
function perRunValues(target: Target, figure: Figure, result: BenchResult): string {
  const runs = result['per_run'];
  if (!Array.isArray(runs)) return '';
  const values = (runs as BenchResult[]).map((r) => {
    const same = target.figures(r).find((f) => f.variant === figure.variant);
    return same?.value === undefined ? '–' : formatValue(same.value, '', target);
  });
  return `runs ${values.join(' / ')}`;
}

/** One row of the table, before formatting. */
interface Row {
  target: Target;
  figure?: Figure;
  result?: BenchResult;
  run?: BenchRun;
}

/** Every target's rows, from this run's results or the saved ones. */
function collectRows(runs: Map<string, BenchRun>): Row[] {
  const cache = new Map<string, BenchResult | undefined>();
  return TARGETS.flatMap((target): Row[] => {
    const run = runs.get(target.bench);
    if (!cache.has(target.bench)) cache.set(target.bench, run?.result ?? readResult(target.bench));
    const result = cache.get(target.bench);
    const figures = result ? target.figures(result) : [];
    return figures.length ? figures.map((figure) => ({ target, figure, result, run })) : [{ target, result, run }];
  });
}

/** The machine most rows were measured on. */
function usualMachine(rows: Row[], fallback: string): string {
  const counts = new Map<string, number>();
  for (const r of rows)
    if (typeof r.result?.['machine'] === 'string')
      counts.set(r.result['machine'], (counts.get(r.result['machine']) ?? 0) + 1);
  return [...counts].sort((a, b) => b[1] - a[1])[0]?.[0] ?? fallback;
}

/** The summary as Markdown. */
export function buildSummary(input: SummaryInput): string {
  const ran = [...input.runs.keys()];
  const rows = collectRows(input.runs);
  const machine = usualMachine(rows, input.machine);
  const lines: string[] = ['# Benchmark summary', ''];
  lines.push(
    'Generated by `npm run bench` (bench/run.ts → bench/summary.ts, targets in bench/targets.ts); do not edit by hand.',
    '',
  );
  lines.push(
    `Machine: ${input.machine} · date: ${input.finished.toISOString()} · load average (1/5/15 min) at start ${loads(input.loadStart)}, at end ${loads(input.loadEnd)} · ` +
      (ran.length
        ? `ran: ${ran.join(', ')} (${Math.round((input.finished.getTime() - input.started.getTime()) / 1000)} s)`
        : 'no benchmark ran: table rebuilt from the saved results'),
    '',
    `Figures measured on ${machine} unless the row says otherwise.`,
    '',
  );
  lines.push('| Benchmark | What | Target | Figure | Met? | Measured |', '|---|---|---|---|---|---|');
  let notMet = 0;
  let unknown = 0;
  for (const { target, figure, result, run } of rows) {
    if (!figure || !result) {
      unknown++;
      const why = run?.error
        ? `FAILED this run (${run.error})`
        : result
          ? 'the result has no such figure'
          : 'never run';
      lines.push(
        `| ${target.bench} | ${cell(target.name)} | ${formatTarget(target)} | not measured | – | ${cell(why)} |`,
      );
      continue;
    }
    const met = meets(target, figure.value);
    if (met === false) notMet++;
    if (met === undefined) unknown++;
    const name = `${target.name}${figure.variant ? `; ${figure.variant}` : ''}`;
    const perRun = result ? perRunValues(target, figure, result) : '';
    const value = `${formatValue(figure.value, target.unit, target)}${figure.detail || perRun ? ` (${[figure.detail, perRun].filter(Boolean).join('; ')})` : ''}`;
    lines.push(
      `| ${target.bench} | ${cell(name)} | ${formatTarget(target)} | ${cell(value)} | ${met === undefined ? '–' : met ? 'yes' : '**no**'} | ${cell(provenance(run, result, figure, machine))} |`,
    );
  }
  lines.push(
    '',
    `${rows.length - notMet - unknown} of ${rows.length} rows met, ${notMet} not met${unknown ? `, ${unknown} without a figure` : ''}.`,
    '',
  );
  const resultOf = (bench: string) => input.runs.get(bench)?.result ?? readResult(bench);
  lines.push(...peerTables(resultOf('gateway'), resultOf('chat-proxy')));
  return lines.join('\n');
}
