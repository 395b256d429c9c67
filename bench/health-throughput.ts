/**
 * /health throughput of Plaza (embedded storage) beside a bare Express hello-world, measured in the
 * same run with the same load (autocannon, 32 connections). The ratio is the figure that counts:
 * these machines are shared and noisy.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { load, saveResult, spawnServer } from './lib.ts';

const DURATION_S = Number(process.env['BENCH_DURATION_S'] ?? 10);
const CONNECTIONS = 32;

/** Runs the /health throughput benchmark and returns its figures. */
export async function benchHealthThroughput(): Promise<Record<string, unknown>> {
  const dir = mkdtempSync(join(tmpdir(), 'plaza-bench-health-'));
  const hello = await spawnServer(
    process.execPath,
    ['bench/fixtures/hello-express.mjs'],
    { PORT: '18091' },
    'http://127.0.0.1:18091/health',
  );
  const plaza = await spawnServer(
    process.execPath,
    ['bin/plaza.mjs', 'serve'],
    { PLAZA_DATA_DIR: dir, PORT: '18092', HOST: '127.0.0.1', LOG_LEVEL: 'warn', MCP_REGISTRY_URL: 'off' },
    'http://127.0.0.1:18092/health',
  );
  try {
    // Warm both, then alternate so drift on a shared machine hits both alike.
    await load(`${hello.url}/health`, { connections: CONNECTIONS, durationS: 2 });
    await load(`${plaza.url}/health`, { connections: CONNECTIONS, durationS: 2 });
    const baseline = await load(`${hello.url}/health`, { connections: CONNECTIONS, durationS: DURATION_S });
    const plazaHealth = await load(`${plaza.url}/health`, { connections: CONNECTIONS, durationS: DURATION_S });
    const figures = {
      connections: CONNECTIONS,
      duration_s: DURATION_S,
      baseline_express_rps: Math.round(baseline.requestsPerSec),
      plaza_health_rps: Math.round(plazaHealth.requestsPerSec),
      ratio: Number((plazaHealth.requestsPerSec / baseline.requestsPerSec).toFixed(3)),
      plaza_p50_ms: plazaHealth.p50Ms,
      plaza_p99_ms: plazaHealth.p99Ms,
      baseline_p99_ms: baseline.p99Ms,
      errors: plazaHealth.errors + plazaHealth.non2xx,
      target_ratio: 0.8,
    };
    saveResult('health-throughput', figures);
    return figures;
  } finally {
    await hello.stop();
    await plaza.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.main) console.log(await benchHealthThroughput());
