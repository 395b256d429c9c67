/**
 * Time from `npm start` to the first healthy /health answer, on embedded storage: a fresh data
 * folder (first start: template load + migrations) and an existing one (restart). Median of runs.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { median, saveResult, spawnServer } from './lib.ts';

const RUNS = Number(process.env['BENCH_RUNS'] ?? 3);

async function timeStart(dataDir: string, port: number): Promise<number> {
  const started = performance.now();
  const server = await spawnServer(
    'npm',
    ['start', '--silent'],
    { PLAZA_DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', MCP_REGISTRY_URL: 'off' },
    `http://127.0.0.1:${port}/health`,
  );
  const elapsed = performance.now() - started;
  await server.stop();
  return elapsed;
}

/** Runs the startup benchmark and returns its figures. */
export async function benchStartup(): Promise<Record<string, number>> {
  const fresh: number[] = [];
  const restart: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const dir = mkdtempSync(join(tmpdir(), 'plaza-bench-start-'));
    fresh.push(await timeStart(dir, 18_080));
    restart.push(await timeStart(dir, 18_080));
    rmSync(dir, { recursive: true, force: true });
  }
  const figures = {
    runs: RUNS,
    fresh_folder_ms: Math.round(median(fresh)),
    existing_folder_ms: Math.round(median(restart)),
    target_ms: 5000,
  };
  saveResult('startup', figures);
  return figures;
}

if (import.meta.main) console.log(await benchStartup());
