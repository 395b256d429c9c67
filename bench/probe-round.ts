/**
 * One full probe round over 1,000 local endpoints (issue 3 target: <= 60 s, process < 300 MB RSS).
 * One local JSON-RPC provider answers on 1,000 paths (10 tools each); the endpoints spread over
 * 127.0.0.0/8 host names so per-host limits apply as they would to real providers. The provider
 * runs in a child process, as providers are other processes (BENCH_PROVIDER=inprocess runs it in
 * the measured process, as this bench first did).
 * Each backend's round runs in a process of its own (started with --expose-gc).
 * Run: `node --import tsx bench/probe-round.ts` (BENCH_DATABASE_URL adds a PostgreSQL run;
 * BENCH_ONLY=pglite|postgres picks one backend; BENCH_ENDPOINTS, BENCH_GLOBAL change the load;
 * PGlite keeps its files in a fresh folder on disk, as `npm start` does, or in BENCH_PGLITE_DIR
 * (`memory://`: in memory); PLAZA_WASM_TIER as for `plaza serve`).
 */
import { fork } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getHeapSpaceStatistics } from 'node:v8';

import { EnvSchema } from '../config/index.ts';
import { createProber } from '../probes/index.ts';
import { applyHeapPolicy } from '../src/app/heap-policy.ts';
import { applyWasmPolicy } from '../src/app/wasm-policy.ts';
import { type Database, migrate, openDatabase } from '../src/db/index.ts';
import { systemClock } from '../src/kernel/index.ts';
import { createLogger } from '../src/log/index.ts';
import { createProbeStore } from '../src/marketplace/index.ts';
import { createPostgresDatabase } from '../test/support/databases.ts';
import { saveResult, startScriptEnv } from './lib.ts';

const ENDPOINTS = Number(process.env['BENCH_ENDPOINTS'] ?? 1_000);
const GLOBAL = Number(process.env['BENCH_GLOBAL'] ?? 16);
const PROVIDER_MODE = process.env['BENCH_PROVIDER'] === 'inprocess' ? 'inprocess' : 'child';

const tools = Array.from({ length: 10 }, (_, i) => ({
  name: `tool_${i}`,
  description: `Tool number ${i}.`,
  inputSchema: { type: 'object' },
}));

const PROVIDER_ARG = '--probe-round-provider';
const ROUND_ARG = '--probe-round-backend';

/** The provider in a child process (this file again, with PROVIDER_ARG); it reports its port. */
async function startProviderProcess(): Promise<{ port: number; close(): void }> {
  const child = fork(import.meta.filename, [PROVIDER_ARG], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const [port] = (await once(child, 'message')) as [number];
  return { port, close: () => child.kill() };
}

async function startProvider(): Promise<{ port: number; close(): void }> {
  const server = createServer(async (req, res) => {
    if (req.method !== 'POST') return res.writeHead(req.method === 'DELETE' ? 200 : 405).end();
    let raw = '';
    for await (const chunk of req) raw += chunk;
    const message = JSON.parse(raw) as { id?: number; method: string; params?: { protocolVersion?: string } };
    if (message.id === undefined) return res.writeHead(202).end();
    const result =
      message.method === 'initialize'
        ? {
            protocolVersion: message.params?.protocolVersion ?? '2025-06-18',
            capabilities: { tools: {} },
            serverInfo: { name: 'bench', version: '1' },
          }
        : { tools };
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ jsonrpc: '2.0', id: message.id, result }));
  });
  server.listen(0, '0.0.0.0');
  await once(server, 'listening');
  return { port: (server.address() as AddressInfo).port, close: () => server.close() };
}

async function round(backend: string, db: Database, port: number): Promise<Record<string, unknown>> {
  await migrate(db.sql);
  await db.sql.query(
    `INSERT INTO "mcp_endpoints" ("id", "provider", "url", "registered_by")
     SELECT 'mcp_round' || lpad(i::text, 6, '0'), 'p' || i, 'http://127.0.0.' || (1 + i % 50) || ':' || $1 || '/mcp/' || i, 'bench@example.com'
       FROM generate_series(1, $2::int) i`,
    [port, ENDPOINTS],
  );
  const prober = createProber({
    store: createProbeStore(db.prisma),
    clock: systemClock,
    log: createLogger({ level: 'warn' }),
    baseIntervalS: 300,
    allowPrivateTargets: true,
    concurrency: { global: GLOBAL, perHost: 2 },
  });
  let peakRss = process.memoryUsage().rss;
  let peakHeap = 0;
  let peakExternal = 0;
  let peakNewSpace = 0;
  const sampler = setInterval(() => {
    const m = process.memoryUsage();
    peakRss = Math.max(peakRss, m.rss);
    peakHeap = Math.max(peakHeap, m.heapTotal);
    peakExternal = Math.max(peakExternal, m.external);
    peakNewSpace = Math.max(
      peakNewSpace,
      getHeapSpaceStatistics().find((space) => space.space_name === 'new_space')?.space_size ?? 0,
    );
  }, 50);
  const { rss: rssBefore, external: externalBefore } = process.memoryUsage();
  const started = performance.now();
  const results = await prober.runDue();
  const seconds = (performance.now() - started) / 1000;
  clearInterval(sampler);
  await prober.close();
  (globalThis as { gc?: () => void }).gc?.();
  const heapAfterGcMb = Math.round(process.memoryUsage().heapUsed / 1e6);
  const healthy = results.filter((r) => r.status === 'healthy').length;
  const [row] = await db.sql.query<{ n: number }>(`SELECT count(*)::int AS n FROM "mcp_tools"`);
  return {
    backend,
    endpoints: ENDPOINTS,
    probed: results.length,
    healthy,
    tools: row?.n,
    round_s: Number(seconds.toFixed(2)),
    rss_before_mb: Math.round(rssBefore / 1e6),
    peak_rss_mb: Math.round(peakRss / 1e6),
    peak_heap_total_mb: Math.round(peakHeap / 1e6),
    external_before_mb: Math.round(externalBefore / 1e6),
    peak_external_mb: Math.round(peakExternal / 1e6),
    peak_new_space_mb: Math.round(peakNewSpace / 1e6),
    heap_after_gc_mb: heapAfterGcMb,
    provider: PROVIDER_MODE,
    global_concurrency: GLOBAL,
    target: '<= 60 s, < 300 MB',
  };
}

/** One round on `backend` in this process (a fresh one: see benchProbeRound). */
async function roundIn(backend: 'pglite' | 'postgres', port: number | undefined): Promise<Record<string, unknown>> {
  const provider = port === undefined ? await startProvider() : undefined;
  try {
    const target = provider?.port ?? port!;
    // As `plaza serve` does at start (src/app/heap-policy.ts, src/app/wasm-policy.ts).
    applyHeapPolicy(EnvSchema.shape.PLAZA_HEAP_GROWING_PERCENT.parse(process.env['PLAZA_HEAP_GROWING_PERCENT']));
    const wasmTier = applyWasmPolicy(
      EnvSchema.shape.PLAZA_WASM_TIER.parse(process.env['PLAZA_WASM_TIER']),
      backend === 'pglite',
    );
    if (backend === 'pglite') {
      // On disk, as `npm start` keeps it (BENCH_PGLITE_DIR=memory:// holds the files in memory).
      const dataDir = process.env['BENCH_PGLITE_DIR'] ?? mkdtempSync(join(tmpdir(), 'plaza-probe-round-'));
      const lite = await openDatabase({ kind: 'pglite', dataDir });
      try {
        return {
          ...(await round('pglite', lite, target)),
          data: dataDir === 'memory://' ? 'memory' : 'disk',
          wasm_tier: wasmTier ?? 'optimizing',
        };
      } finally {
        await lite.close();
        if (!process.env['BENCH_PGLITE_DIR']) rmSync(dataDir, { recursive: true, force: true });
      }
    }
    const created = await createPostgresDatabase(process.env['BENCH_DATABASE_URL'], 'plaza_bench_probe');
    const db = await openDatabase({ kind: 'postgres', url: created.url });
    try {
      return { ...(await round('postgres', db, target)), wasm_tier: wasmTier ?? 'optimizing' };
    } finally {
      await db.close();
      await created.drop();
    }
  } finally {
    provider?.close();
  }
}

/**
 * Runs one probe round on PGlite and, if configured, PostgreSQL, each in a fresh process: the
 * process's RSS is the figure, and neither PGlite's WebAssembly memory (never returned) nor the
 * benchmarks run before it in `npm run bench` may count against the other.
 */
export async function benchProbeRound(): Promise<Record<string, unknown>[]> {
  const provider = PROVIDER_MODE === 'inprocess' ? undefined : await startProviderProcess();
  const backends = (['pglite', 'postgres'] as const).filter((b) =>
    b === 'pglite'
      ? process.env['BENCH_ONLY'] !== 'postgres'
      : Boolean(process.env['BENCH_DATABASE_URL']) && process.env['BENCH_ONLY'] !== 'pglite',
  );
  const rows: Record<string, unknown>[] = [];
  try {
    for (const backend of backends) {
      // The round runs with `npm start`'s Node flags (a 32 MB young generation) unless given others.
      const flags = process.execArgv.some((a) => a.startsWith('--max-semi-space-size'))
        ? []
        : ['--max-semi-space-size=16'];
      const execArgv = [
        ...flags,
        ...process.execArgv,
        ...(process.execArgv.includes('--expose-gc') ? [] : ['--expose-gc']),
      ];
      const child = fork(import.meta.filename, [ROUND_ARG, backend, String(provider?.port ?? '')], {
        execArgv,
        // The C allocator's settings as `npm start` gives them (src/app/allocator-env.ts).
        env: { ...process.env, ...startScriptEnv() },
        stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      });
      const [row] = (await once(child, 'message')) as [Record<string, unknown>];
      rows.push(row);
      if (child.exitCode === null) await once(child, 'exit');
    }
  } finally {
    provider?.close();
  }
  saveResult('probe-round', { rows });
  return rows;
}

if (process.argv.includes(PROVIDER_ARG)) {
  const { port } = await startProvider();
  process.send!(port);
  process.on('disconnect', () => process.exit(0));
} else if (process.argv.includes(ROUND_ARG)) {
  const [backend, port] = process.argv.slice(process.argv.indexOf(ROUND_ARG) + 1);
  const row = await roundIn(backend as 'pglite' | 'postgres', port ? Number(port) : undefined);
  process.send!(row, () => process.exit(0));
} else if (import.meta.main) {
  console.table(await benchProbeRound());
}
