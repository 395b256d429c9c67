/**
 * The package scan on adversarial 4 MiB files (test/support/adversarial-hooks.ts): the time of
 * `scanPackageDir` per case, each scan in a child process with a time limit, so a quadratic scanner
 * can be measured beside the current one in the same invocation.
 * Run: `node bench/scan.ts [--baseline <dir holding an older src/sources>]`, e.g. after
 * `mkdir -p /tmp/old && git archive eb4511f src probes | tar -x -C /tmp/old && ln -s $PWD/node_modules /tmp/old/`
 * (src/sources imports probes/ since; the baseline of bench/README's second scan table).
 * Env: BENCH_SCAN_MB (4), BENCH_SCAN_LIMIT_S (60).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

import type * as Sources from '../src/sources/index.ts';
import { ADVERSARIAL_CASES } from '../test/support/adversarial-hooks.ts';

const MB = Number(process.env['BENCH_SCAN_MB'] ?? 4);
const LIMIT_S = Number(process.env['BENCH_SCAN_LIMIT_S'] ?? 60);

/** In the child: scan `pkg` with the scanner at `module`, print the milliseconds. */
async function child(module: string, pkg: string): Promise<void> {
  const { scanPackageDir, loadDenyList } = (await import(pathToFileURL(module).href)) as typeof Sources;
  const start = performance.now();
  await scanPackageDir(pkg, undefined, loadDenyList(undefined));
  process.stdout.write(String(performance.now() - start));
}

function timeIn(module: string, pkg: string): string {
  try {
    return `${Number(execFileSync(process.execPath, [import.meta.filename, '--child', module, pkg], { timeout: LIMIT_S * 1000, encoding: 'utf8' })).toFixed(0)} ms`;
  } catch {
    return `> ${LIMIT_S} s`;
  }
}

if (process.argv[2] === '--child') await child(process.argv[3]!, process.argv[4]!);
else {
  const at = process.argv.indexOf('--baseline');
  const baseline = at > 0 ? resolve(process.argv[at + 1]!, 'src/sources/index.ts') : undefined;
  const current = resolve(import.meta.dirname, '../src/sources/index.ts');
  console.log(`| ${MB} MiB file | ${baseline ? 'baseline | ' : ''}current |`);
  for (const [what, file, make] of ADVERSARIAL_CASES) {
    const pkg = mkdtempSync(join(tmpdir(), 'bench-scan-'));
    writeFileSync(join(pkg, 'LICENSE'), 'MIT');
    mkdirSync(dirname(join(pkg, file)), { recursive: true });
    writeFileSync(join(pkg, file), make(MB * 1024 * 1024));
    console.log(`| ${what} | ${baseline ? `${timeIn(baseline, pkg)} | ` : ''}${timeIn(current, pkg)} |`);
    rmSync(pkg, { recursive: true, force: true });
  }
}
