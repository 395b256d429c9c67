/**
 * `npm run bench`: runs every benchmark in turn (`npm run bench -- gateway website` runs some),
 * then writes bench/results/summary.md — every target beside its figure, computed from the results —
 * and prints it. Targets whose benchmark did not run keep the figures of its last saved result,
 * marked with that result's date. `npm run bench -- --table-only` only rebuilds the table.
 * BENCH_RUNS=3 runs each benchmark three times and saves the medians (bench/merge-runs.ts).
 */
import { writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';

import { benchAgpk } from './agpk.ts';
import { benchChatProxy } from './chat-proxy.ts';
import { benchGateway } from './gateway.ts';
import { benchHealthThroughput } from './health-throughput.ts';
import { benchHeldAnswers } from './held-answers.ts';
import { machine, saveResult } from './lib.ts';
import { benchMcpBridge } from './mcp-bridge.ts';
import { runRepeated } from './merge-runs.ts';
import { benchProbeRound } from './probe-round.ts';
import { benchSoak } from './soak.ts';
import { benchStartup } from './startup.ts';
import { type BenchRun, buildSummary, SUMMARY_FILE } from './summary.ts';
import { benchToolSearch } from './tool-search.ts';
import { benchWebsite } from './website.ts';

const benches: [string, () => Promise<Record<string, unknown>>][] = [
  ['startup', benchStartup],
  ['health-throughput', benchHealthThroughput],
  ['gateway', benchGateway],
  ['agpk', benchAgpk],
  ['website', benchWebsite],
  ['chat-proxy', benchChatProxy],
  ['mcp-bridge', () => benchMcpBridge()],
  ['tool-search', async () => ({ rows: await benchToolSearch() })],
  ['probe-round', async () => ({ rows: await benchProbeRound() })],
  ['soak', benchSoak],
  ['held-answers', benchHeldAnswers],
];

const args = process.argv.slice(2);
const tableOnly = args.includes('--table-only');
/** Short names: `npm run bench -- gateway chat`. */
const ALIASES: Record<string, string> = { chat: 'chat-proxy' };
const only = args.filter((a) => !a.startsWith('--')).map((a) => ALIASES[a] ?? a);
const unknown = only.filter((name) => !benches.some(([n]) => n === name));
if (unknown.length > 0) {
  console.error(`unknown benchmark ${unknown.join(', ')}; known: ${benches.map(([n]) => n).join(', ')}`);
  process.exit(2);
}

const RUNS = Number(process.env['BENCH_RUNS'] ?? 1);
if (!(Number.isInteger(RUNS) && RUNS >= 1)) {
  console.error(`BENCH_RUNS must be a whole number >= 1, got ${process.env['BENCH_RUNS']}`);
  process.exit(2);
}

const started = new Date();
const loadStart = loadavg();
const runs = new Map<string, BenchRun>();
console.log(
  `machine: ${machine()}  date: ${started.toISOString()}  load: ${loadStart.map((l) => l.toFixed(2)).join(' ')}`,
);
for (const [name, run] of tableOnly ? [] : benches) {
  if (only.length > 0 && !only.includes(name)) continue;
  console.log(`\n## ${name}`);
  const entry: BenchRun = { loadStart: loadavg()[0]!, loadEnd: 0 };
  runs.set(name, entry);
  try {
    const figures = await runRepeated(run, RUNS, (n) => RUNS > 1 && console.log(`run ${n} of ${RUNS}`));
    // Each run saved its own figures; the file keeps their medians.
    if (RUNS > 1) saveResult(name, figures);
    entry.result = { name, date: new Date().toISOString(), machine: machine(), ...figures };
    // Flat figures read best as a table; nested ones (per upstream, per route) as JSON.
    if (Object.values(figures).some((v) => typeof v === 'object' && v !== null))
      console.log(JSON.stringify(figures, null, 2));
    else console.table(figures);
  } catch (error) {
    // One benchmark failing must not cost the others' figures; the table says it failed.
    entry.error = error instanceof Error ? error.message.split('\n')[0]! : String(error);
    console.error(`${name} failed:`, error);
    process.exitCode = 1;
  }
  entry.loadEnd = loadavg()[0]!;
}

const summary = buildSummary({
  machine: machine(),
  started,
  finished: new Date(),
  loadStart,
  loadEnd: loadavg(),
  runs,
});
writeFileSync(SUMMARY_FILE, summary);
console.log(`\n${summary}\nwrote ${SUMMARY_FILE}`);
