/**
 * Runs the MCP conformance suite (`@modelcontextprotocol/conformance server --suite all`) against a
 * URL and reads its verdicts per scenario from the `checks.json` files it saves. A scenario passes
 * as the suite's own summary says (✓): none of its checks is a FAILURE.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';

import { runChild } from './children.ts';

const require = createRequire(import.meta.url);

/** The suite's CLI entry (`CONFORMANCE_BIN` overrides), or undefined when it is not installed. */
export function conformanceBin(): string | undefined {
  const fromEnv = process.env['CONFORMANCE_BIN'];
  if (fromEnv) return existsSync(fromEnv) ? fromEnv : undefined;
  try {
    const root = dirname(require.resolve('@modelcontextprotocol/conformance/package.json'));
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
      bin?: string | Record<string, string>;
    };
    const bin = typeof pkg.bin === 'string' ? pkg.bin : (pkg.bin?.['conformance'] ?? 'dist/index.js');
    return join(root, bin);
  } catch {
    return undefined;
  }
}

export type CheckStatus = 'SUCCESS' | 'FAILURE' | 'WARNING' | 'SKIPPED' | 'INFO';

/** One check of a scenario, as the suite saves it. */
export interface Check {
  id: string;
  name?: string;
  status: CheckStatus;
  errorMessage?: string;
}

/** One run: each scenario's checks, and the suite's output (for failure messages). */
export interface SuiteRun {
  scenarios: Map<string, Check[]>;
  output: string;
}

/** Whether a scenario passed: it ran and none of its checks failed (the suite's ✓). */
export function scenarioPassed(checks: Check[] | undefined): boolean {
  return !!checks && !checks.some((c) => c.status === 'FAILURE');
}

/** The failed checks of a scenario, one line each (`id: message`), for reports and assertion messages. */
export function failures(checks: Check[] | undefined): string[] {
  if (!checks) return ['did not run'];
  return checks.filter((c) => c.status === 'FAILURE').map((c) => `${c.id}: ${c.errorMessage ?? ''}`.trim());
}

/**
 * Runs every server scenario of the suite (`--suite all`, or `suite`) against `url`, in one invocation. A
 * scenario gets `scenarioTimeoutMs` (15 s; the suite's default is 30 s): each passing one takes
 * well under a second, and a call that hangs through a gateway should not hold the run for long.
 */
export async function runConformance(
  url: string,
  options: { timeoutMs?: number; scenarioTimeoutMs?: number; suite?: 'all' | 'active' } = {},
): Promise<SuiteRun> {
  const bin = conformanceBin();
  if (!bin) throw new Error('@modelcontextprotocol/conformance is not installed (or CONFORMANCE_BIN names no file)');
  const outDir = mkdtempSync(join(tmpdir(), 'plaza-conformance-'));
  try {
    // The exit code only says whether something failed; the caller decides what matters.
    const { stdout, stderr } = await runChild(
      process.execPath,
      [
        ...[bin, 'server', '--url', url, '--suite', options.suite ?? 'all', '--output-dir', outDir],
        ...['--timeout', String(options.scenarioTimeoutMs ?? 15_000)],
      ],
      { cwd: outDir, timeoutMs: options.timeoutMs ?? 300_000, env: { ...process.env, NO_COLOR: '1' } },
    );
    const scenarios = new Map<string, Check[]>();
    for (const file of readdirSync(outDir, { recursive: true, encoding: 'utf8' })) {
      if (basename(file) !== 'checks.json') continue;
      // Result folders are `server-<scenario>-<ISO timestamp>` (scenario names may hold `/`).
      const folder = dirname(file).replace(/\\/g, '/');
      const scenario = folder.replace(/-\d{4}-\d{2}-\d{2}T[\d-]+Z$/, '').replace(/^server-/, '');
      scenarios.set(scenario, JSON.parse(readFileSync(join(outDir, file), 'utf8')) as Check[]);
    }
    return { scenarios, output: `${stdout}\n${stderr}` };
  } finally {
    rmSync(outDir, { recursive: true, force: true });
  }
}

/** The table `npm run conformance` prints: one row per scenario, ✓/✗ per target, and the totals. */
export function formatTable(targets: { label: string; run: SuiteRun }[]): string {
  const names = [...new Set(targets.flatMap((t) => [...t.run.scenarios.keys()]))].sort();
  const width = Math.max(8, ...names.map((n) => n.length));
  const head = `${'scenario'.padEnd(width)}  ${targets.map((t) => t.label).join('  ')}`;
  const rows = names.map(
    (name) =>
      `${name.padEnd(width)}  ${targets
        .map((t) =>
          (t.run.scenarios.has(name) ? (scenarioPassed(t.run.scenarios.get(name)) ? '✓' : '✗') : '-').padEnd(
            t.label.length,
          ),
        )
        .join('  ')}`,
  );
  const totals = targets
    .map((t) => `${t.label}: ${[...t.run.scenarios.values()].filter(scenarioPassed).length} of ${t.run.scenarios.size}`)
    .join(', ');
  return [head, ...rows, '', `passing — ${totals}`].join('\n');
}
