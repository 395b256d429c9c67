/**
 * Soak (issue 10): mixed traffic against one `plaza serve` for BENCH_SOAK_S seconds (default 600)
 * and the server's resident memory over time; target: RSS growth < 10% from the end of the first
 * minute (warm) to the end. Traffic, 8 workers back to back: catalog GETs in both locales, /health,
 * tool search, intent recommendations, leads (new e-mails, so rows grow), guest tokens,
 * embedded-assistant chat completions (streamed and not), source list reads, pages. Limits are
 * raised so the traffic is served, not refused.
 *
 * Storage: embedded PGlite (its WebAssembly heap lives in the server's process), and PostgreSQL in a
 * fresh database when BENCH_DATABASE_URL names a server (then only Plaza's own memory is in the
 * process). BENCH_ONLY=pglite|postgres runs one; the other backend's last row is kept, with its date.
 *
 * Memory: RSS (anon and file-backed) from /proc every 5 s; each minute the resident part of
 * PGlite's WebAssembly memory (from /proc/<pid>/smaps) and the V8 heap and external figures, asked
 * over IPC of a preload in the server (bench/fixtures/soak-memory.mjs, with --expose-gc); at the
 * end of minute 1 and at the end, after the RSS reading, a full GC and the live heap it leaves. BENCH_SOAK_SNAPSHOTS=120,540 writes heap snapshots at those seconds (into
 * BENCH_SOAK_SNAPSHOT_DIR, default the system temp folder) — they disturb the RSS figures, so they
 * are off by default. Run: `node --import tsx bench/soak.ts`.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';

import { createPostgresDatabase } from '../test/support/databases.ts';
import { loadLoop, machine, ROOT, saveResult, startScriptEnv, waitHealthy } from './lib.ts';
import { readResult } from './summary.ts';

const SOAK_S = Number(process.env['BENCH_SOAK_S'] ?? 600);
const WARM_S = Math.min(60, Math.floor(SOAK_S / 5 / 5) * 5 || 5);
const SAMPLE_S = 5;
const SNAPSHOTS = (process.env['BENCH_SOAK_SNAPSHOTS'] ?? '').split(',').filter(Boolean).map(Number);
const SNAPSHOT_DIR = process.env['BENCH_SOAK_SNAPSHOT_DIR'] ?? tmpdir();

type Backend = 'pglite' | 'postgres';

const mb = (bytes: number) => Math.round(bytes / 2 ** 20);

/** RSS and its anon / file-backed parts in MB, from /proc/<pid>/status. */
function rss(pid: number): { rss: number; anon: number; file: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (key: string) =>
    Number(/^(\S+):\s+(\d+)/m.exec(status.split('\n').find((l) => l.startsWith(`${key}:`)) ?? '')?.[2] ?? 0);
  return {
    rss: Math.round(kb('VmRSS') / 1024),
    anon: Math.round(kb('RssAnon') / 1024),
    file: Math.round(kb('RssFile') / 1024),
  };
}

/**
 * Resident MB of the embedded database's WebAssembly memory: anonymous mappings of 128 MB or more.
 * V8's heap pages (256 KB) and glibc's arenas (64 MB) are smaller, and Node maps a WebAssembly
 * memory as one region of its current size (PGlite's: ~190 MB); 0 on PostgreSQL.
 */
function wasmRssMb(pid: number): number {
  let size = 0;
  let anonymous = false;
  let kb = 0;
  for (const line of readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
    const map = /^([0-9a-f]+)-([0-9a-f]+) \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (map) {
      size = parseInt(map[2]!, 16) - parseInt(map[1]!, 16);
      anonymous = map[3] === '';
      continue;
    }
    const rssLine = /^Rss:\s+(\d+) kB/.exec(line);
    if (rssLine && anonymous && size >= 128 * 2 ** 20) kb += Number(rssLine[1]);
  }
  return Math.round(kb / 1024);
}

/** What the server's preload answers: process.memoryUsage() before and after an optional GC. */
interface MemoryAnswer {
  before: NodeJS.MemoryUsage;
  after: NodeJS.MemoryUsage;
  gc: boolean;
  snapshot?: string;
}

/** A `plaza serve` child with the memory preload and an IPC channel to it. */
interface SoakServer {
  child: ChildProcess;
  url: string;
  memory(options?: { gc?: boolean; snapshot?: string }): Promise<MemoryAnswer>;
  stop(): Promise<void>;
}

/** A free local port (other sessions on this machine run benchmarks too; a fixed port can collide). */
async function freePort(): Promise<number> {
  const probe = createServer().listen(0, '127.0.0.1');
  await once(probe, 'listening');
  const { port } = probe.address() as { port: number };
  probe.close();
  await once(probe, 'close');
  return port;
}

async function startServer(env: NodeJS.ProcessEnv): Promise<SoakServer> {
  const port = await freePort();
  // Node's flags as `npm start` gives them (BENCH_SOAK_NODE_ARGS replaces them), plus the bench's probe.
  const nodeArgs = (process.env['BENCH_SOAK_NODE_ARGS'] ?? '--max-semi-space-size=16').split(' ').filter(Boolean);
  const child = spawn(
    process.execPath,
    [...nodeArgs, '--expose-gc', '--import', './bench/fixtures/soak-memory.mjs', 'bin/plaza.mjs', 'serve'],
    {
      cwd: ROOT,
      env: { ...startScriptEnv(), ...env, PORT: String(port) },
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    },
  );
  const exited = once(child, 'exit');
  let nextId = 0;
  const pending = new Map<number, (answer: MemoryAnswer) => void>();
  child.on('message', (m: { type?: string; id?: number } & MemoryAnswer) => {
    if (m.type === 'memory' && m.id !== undefined) pending.get(m.id)?.(m);
  });
  await waitHealthy(`http://127.0.0.1:${port}/health`);
  return {
    child,
    url: `http://127.0.0.1:${port}`,
    memory(options = {}) {
      const id = nextId++;
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('the server did not answer the memory request')), 120_000);
        pending.set(id, (answer) => {
          clearTimeout(timer);
          pending.delete(id);
          resolve(answer);
        });
        child.send({ type: 'memory', id, ...options });
      });
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      child.kill('SIGTERM');
      await exited;
      clearTimeout(timer);
    },
  };
}

/** The 8-worker mixed traffic; returns the loop's result and the failures. */
async function traffic(base: string) {
  const token = (
    (await (await fetch(`${base}/api/auth/guest-token`, { method: 'POST' })).json()) as { data: { token: string } }
  ).data.token;
  const json = (body: unknown) => ({
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const chat = (stream: boolean) => ({
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({
      model: 'plaza-assistant',
      stream,
      messages: [{ role: 'user', content: 'Which plan fits a team of ten agents?' }],
    }),
  });
  let n = 0;
  const requests: [string, RequestInit?][] = [
    ['/api/products?locale=en'],
    ['/api/plans?locale=zh-CN'],
    ['/health'],
    ['/api/mcp/tools?q=weather&limit=20'],
    ['/api/agent/intent', json({ prompt: 'We need receipts for every agent call for our auditors' })],
    ['/api/auth/guest-token', json({})],
    ['/api/v1/chat/completions', chat(false)],
    ['/api/v1/chat/completions', chat(true)],
    ['/api/agpk/sources?limit=20'],
    ['/'],
    ['/marketplace'],
  ];
  let failures = 0;
  const result = await loadLoop({
    connections: 8,
    durationS: SOAK_S,
    send: async () => {
      const i = n++;
      // Every 25th request is a new lead: the database grows as it would.
      const [path, init] =
        i % 25 === 0
          ? ['/api/leads', json({ email: `soak-${i}@example.com`, scenario: 'developer' })]
          : requests[i % requests.length]!;
      const res = await fetch(`${base}${path}`, init);
      await res.arrayBuffer();
      if (res.status >= 400) {
        failures++;
        if (process.env['BENCH_VERBOSE']) console.log(res.status, path);
      }
      return res.status < 400;
    },
  });
  return { result, failures };
}

/** One soak on `backend`; returns its row. */
async function soak(backend: Backend): Promise<Record<string, unknown>> {
  const dir = mkdtempSync(join(tmpdir(), 'plaza-bench-soak-'));
  const unlimited = '1000000';
  // The caller's own storage settings must not leak into the server under test.
  const { DATABASE_URL: _db, REDIS_URL: _redis, ...inherited } = process.env;
  const env: NodeJS.ProcessEnv = {
    ...inherited,
    PLAZA_DATA_DIR: dir,
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    MCP_REGISTRY_URL: 'off',
    PLAZA_RATE_LIMIT_INTENT_PER_MIN: unlimited,
    PLAZA_RATE_LIMIT_LEADS_PER_MIN: unlimited,
    CHAT_RPM_PER_SUBJECT: unlimited,
    CHAT_RPM_PER_IP: unlimited,
    CHAT_TOKENS_PER_DAY_PER_SUBJECT: '1000000000',
    CHAT_TOKENS_PER_DAY_PER_IP: '1000000000',
    GUEST_TOKEN_RPM_PER_IP: unlimited,
  };
  const database =
    backend === 'postgres'
      ? await createPostgresDatabase(process.env['BENCH_DATABASE_URL'], 'plaza_bench_soak')
      : undefined;
  if (database) env['DATABASE_URL'] = database.url;
  const loadStart = loadavg();
  const server = await startServer(env);
  const pid = server.child.pid!;
  try {
    const samples: { t: number; rss: number; anon: number; file: number }[] = [];
    const minutes: {
      t: number;
      rss_mb: number;
      anon_mb: number;
      wasm_rss_mb: number;
      heap_total_mb: number;
      heap_used_mb: number;
      external_mb: number;
      array_buffers_mb: number;
    }[] = [];
    let warmGc: MemoryAnswer | undefined;
    let warmWasm = 0;
    const snapshots: string[] = [];
    let tick = 0;
    let chain = Promise.resolve();
    const sampler = setInterval(() => {
      const t = ++tick * SAMPLE_S;
      const r = rss(pid);
      samples.push({ t, ...r });
      // IPC requests run one after another, after this tick's RSS reading.
      chain = chain.then(async () => {
        if (t % 60 === 0 || t === WARM_S) {
          const m = await server.memory({ gc: t === WARM_S });
          if (t === WARM_S) [warmGc, warmWasm] = [m, wasmRssMb(pid)];
          if (t % 60 === 0) {
            const u = m.before;
            minutes.push({
              t,
              rss_mb: r.rss,
              anon_mb: r.anon,
              wasm_rss_mb: wasmRssMb(pid),
              heap_total_mb: mb(u.heapTotal),
              heap_used_mb: mb(u.heapUsed),
              external_mb: mb(u.external),
              array_buffers_mb: mb(u.arrayBuffers),
            });
          }
        }
        if (SNAPSHOTS.includes(t))
          snapshots.push(
            (await server.memory({ gc: true, snapshot: join(SNAPSHOT_DIR, `soak-${backend}-${t}s.heapsnapshot`) }))
              .snapshot!,
          );
      });
    }, SAMPLE_S * 1000);
    const { result, failures } = await traffic(server.url);
    clearInterval(sampler);
    await chain;
    const end = rss(pid);
    const endWasm = wasmRssMb(pid);
    const endGc = await server.memory({ gc: true });
    const warm = samples.find((s) => s.t === WARM_S) ?? samples[0]!;
    const peak = Math.max(...samples.filter((s) => s.t >= warm.t).map((s) => s.rss), end.rss);
    const pct = (from: number, to: number) => Number((((to - from) / from) * 100).toFixed(1));
    return {
      backend,
      date: new Date().toISOString(),
      machine: machine(),
      load_avg_start: loadStart.map((l) => Number(l.toFixed(2))),
      load_avg_end: loadavg().map((l) => Number(l.toFixed(2))),
      soak_s: SOAK_S,
      warm_s: WARM_S,
      requests: result.requests,
      requests_per_s: Math.round(result.requestsPerSec),
      failures,
      p99_ms: result.p99Ms,
      rss_warm_mb: warm.rss,
      rss_end_mb: end.rss,
      rss_peak_mb: peak,
      rss_growth_pct: pct(warm.rss, end.rss),
      rss_peak_growth_pct: pct(warm.rss, peak),
      rss_anon_warm_mb: warm.anon,
      rss_anon_end_mb: end.anon,
      rss_file_warm_mb: warm.file,
      rss_file_end_mb: end.file,
      wasm_rss_warm_mb: warmWasm,
      wasm_rss_end_mb: endWasm,
      heap_after_gc_warm_mb: warmGc ? mb(warmGc.after.heapUsed) : undefined,
      heap_after_gc_end_mb: mb(endGc.after.heapUsed),
      heap_after_gc_growth_pct: warmGc ? pct(warmGc.after.heapUsed, endGc.after.heapUsed) : undefined,
      external_after_gc_warm_mb: warmGc ? mb(warmGc.after.external) : undefined,
      external_after_gc_end_mb: mb(endGc.after.external),
      heap_total_end_mb: mb(endGc.before.heapTotal),
      target_growth_pct: 10,
      rss_by_minute_mb: minutes.map((m) => m.rss_mb),
      memory_by_minute: minutes,
      ...(snapshots.length ? { heap_snapshots: snapshots } : {}),
    };
  } finally {
    await server.stop();
    await database?.drop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Rows of the last saved soak for backends not run now (its first result was one flat PGlite row). */
function keptRows(ran: Backend[]): Record<string, unknown>[] {
  const previous = readResult('soak');
  if (!previous) return [];
  const { name: _name, date, machine: savedOn, rows, ...flat } = previous;
  const list = Array.isArray(rows)
    ? (rows as Record<string, unknown>[])
    : 'rss_growth_pct' in flat
      ? [{ backend: 'pglite', date, machine: savedOn, ...flat }]
      : [];
  return list
    .filter((row) => !ran.includes(row['backend'] as Backend))
    .map((row) => ({ ...row, kept_from: row['kept_from'] ?? row['date'] ?? date }));
}

/** Runs the soak on each backend and returns its figures. */
export async function benchSoak(): Promise<Record<string, unknown>> {
  const only = process.env['BENCH_ONLY'];
  const backends: Backend[] = (['pglite', 'postgres'] as const).filter((b) =>
    only ? only === b : b === 'pglite' || Boolean(process.env['BENCH_DATABASE_URL']),
  );
  if (backends.includes('postgres') && !process.env['BENCH_DATABASE_URL'])
    throw new Error('BENCH_ONLY=postgres needs BENCH_DATABASE_URL');
  const rows: Record<string, unknown>[] = [];
  for (const backend of backends) rows.push(await soak(backend));
  const figures = { rows: [...rows, ...keptRows(backends)] };
  saveResult('soak', figures);
  return figures;
}

if (import.meta.main) console.log(JSON.stringify(await benchSoak(), null, 2));
