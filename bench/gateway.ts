/**
 * MCP gateway overhead (issue 4): the same upstream under the same load in one run, called
 * directly, through the passthrough `/mcp/p/<provider>` and through the aggregate `/mcp`. Each
 * gateway runs in its own process (bench/fixtures/gateway-server.ts) with the real receipt writer
 * (`sync`): `pglite` stores receipts in an embedded data folder, `postgres` (when
 * BENCH_DATABASE_URL is set) in a fresh PostgreSQL database, `memory` only counts them (the
 * gateway's own cost). Each upstream runs in its own process too, so the load generator shares an
 * event loop with none of them. Upstreams: a minimal JSON-RPC server
 * (bench/fixtures/mini-upstream.mjs) and `@modelcontextprotocol/server-everything` (streamable
 * HTTP, SSE answers, sessions). Load: tools/call `echo` back to back, concurrency 1 (latency) and
 * 32 (throughput). Targets: added p50 <= 1 ms and p99 <= 5 ms at concurrency 1; >= 70% of direct
 * throughput at 32 with sync receipts; receipts == calls. A gateway label with `-async` (e.g.
 * `pglite-async`) writes receipts with `async` durability: the latency target names no
 * durability, and a sync receipt at concurrency 1 waits for one database commit (an fsync).
 * Run: `node --import tsx bench/gateway.ts`. Env: BENCH_DURATION_S per phase (default 3),
 * BENCH_UPSTREAMS (mini,everything), BENCH_GATEWAYS (pglite,pglite-async,memory; postgres and
 * postgres-async are added when BENCH_DATABASE_URL is set), BENCH_DATABASE_URL,
 * BENCH_RECEIPTS (sync | async), BENCH_GATEWAY_NODE_ARGS (e.g. --cpu-prof), BENCH_REFERENCE=0 (leave
 * out the reference below).
 *
 * A reference runs beside the gateways: bench/fixtures/bare-gateway.mjs, the least a gateway must
 * do per call (identity, one Ed25519 assertion, forward, stamp, digest) and nothing else, alone
 * (`reference_bare`) and with a receipt row group-committed to PostgreSQL before each answer
 * (`reference_bare-postgres`, when BENCH_DATABASE_URL is set). Its ratio to direct says what this
 * machine allows a gateway at all, so Plaza's can be read against it.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

import { Agent, request } from 'undici';

import { createPostgresDatabase } from '../test/support/databases.ts';
import { cpuSeconds, loadLoop, type LoopResult, type ReadyChild, saveResult, spawnReady } from './lib.ts';

const DURATION_S = Number(process.env['BENCH_DURATION_S'] ?? 3);
const UPSTREAMS = (process.env['BENCH_UPSTREAMS'] ?? 'mini,everything').split(',').filter(Boolean);
const RECEIPTS = process.env['BENCH_RECEIPTS'] ?? 'sync';
/** Gateway children: `pglite` and `postgres` store receipts (RECEIPTS durability, or async with an `-async` suffix), `memory` only counts them. */
const GATEWAYS = (process.env['BENCH_GATEWAYS'] ?? 'pglite,pglite-async,memory').split(',').filter(Boolean);
const HIGH = 32;
/**
 * Node flags of the gateway child: by default those `npm start` gives `plaza serve` (a 32 MB young
 * generation); e.g. add `--cpu-prof --cpu-prof-dir=/tmp/prof` to see where its time goes.
 */
const GATEWAY_NODE_ARGS = (process.env['BENCH_GATEWAY_NODE_ARGS'] ?? '--max-semi-space-size=16')
  .split(' ')
  .filter(Boolean);
const PROTOCOL_VERSION = '2025-06-18';

/** The load generator's connection pool (keep-alive); one per run, closed by closeLoadPool. */
let dispatcher: Agent | undefined;

/** Closes the load generator's connection pool (the next call opens a new one). */
export async function closeLoadPool(): Promise<void> {
  await dispatcher?.close();
  dispatcher = undefined;
}

/** One way of calling the echo tool: a URL, fixed headers, and the tool name to call. */
export interface Target {
  url: string;
  headers: Record<string, string>;
  tool: string;
  /** `params._meta` of each call (a 2026-07-28 request's envelope). */
  meta?: Record<string, unknown>;
}

let sequence = 0;

async function post(
  target: Target,
  body: unknown,
): Promise<{ status: number; headers: Record<string, unknown>; text: string }> {
  const res = await request(target.url, {
    method: 'POST',
    dispatcher: (dispatcher ??= new Agent({ connections: 128, keepAliveTimeout: 60_000, pipelining: 1 })),
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...target.headers },
    body: JSON.stringify(body),
  });
  return { status: res.statusCode, headers: res.headers, text: await res.body.text() };
}

/** Initializes an MCP session at `url` (directly or through the gateway); returns the headers to reuse. */
export async function initialize(url: string, headers: Record<string, string>): Promise<Record<string, string>> {
  const target = { url, headers, tool: '' };
  const init = await post(target, {
    jsonrpc: '2.0',
    id: 0,
    method: 'initialize',
    params: { protocolVersion: PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'plaza-bench', version: '1' } },
  });
  if (init.status !== 200) throw new Error(`initialize at ${url} answered ${init.status}: ${init.text.slice(0, 200)}`);
  const session = init.headers['mcp-session-id'];
  const out: Record<string, string> = { ...headers, 'mcp-protocol-version': PROTOCOL_VERSION };
  if (typeof session === 'string') out['mcp-session-id'] = session;
  const notified = await post({ url, headers: out, tool: '' }, { jsonrpc: '2.0', method: 'notifications/initialized' });
  if (notified.status >= 300) throw new Error(`notifications/initialized at ${url} answered ${notified.status}`);
  return out;
}

/** Calls echo once; true when the answer is a successful result carrying the echoed text. */
export async function callEcho(target: Target, counter: { calls: number }): Promise<boolean> {
  const n = ++sequence;
  counter.calls++;
  const res = await post(target, {
    jsonrpc: '2.0',
    id: n,
    method: 'tools/call',
    params: { name: target.tool, arguments: { message: `m${n}` }, ...(target.meta ? { _meta: target.meta } : {}) },
  });
  return res.status === 200 && res.text.includes(`Echo: m${n}`) && !res.text.includes('"isError":true');
}

function run(target: Target, connections: number, durationS: number, counter: { calls: number }): Promise<LoopResult> {
  return loadLoop({ connections, durationS, send: () => callEcho(target, counter) });
}

export async function startUpstream(name: string): Promise<ReadyChild<{ port: number }> & { url: string }> {
  if (name === 'mini') {
    const child = await spawnReady<{ port: number }>(process.execPath, ['bench/fixtures/mini-upstream.mjs'], {
      PORT: '0',
    });
    return { ...child, url: `http://127.0.0.1:${child.info.port}/mcp` };
  }
  if (name === 'everything') {
    // server-everything logs "listening on port N" on stderr; pick the port ourselves.
    const port = 18_200 + Math.floor(Math.random() * 500);
    const require = createRequire(import.meta.url);
    const entry = join(
      dirname(require.resolve('@modelcontextprotocol/server-everything/package.json')),
      'dist',
      'index.js',
    );
    const child = await spawnReady<{ port: number }>(
      process.execPath,
      ['--input-type=module', '-e', everythingWrapper(entry, port)],
      {},
    );
    return { ...child, url: `http://127.0.0.1:${port}/mcp` };
  }
  throw new Error(`unknown upstream ${name}`);
}

/** A wrapper that starts server-everything as a grandchild and prints `ready` once it listens. */
function everythingWrapper(entry: string, port: number): string {
  return `
import { spawn } from 'node:child_process';
const child = spawn(process.execPath, [${JSON.stringify(entry)}, 'streamableHttp'], { env: { PATH: process.env.PATH ?? '', PORT: '${port}' }, stdio: ['ignore', 'ignore', 'pipe'] });
let out = '';
child.stderr.on('data', (d) => { out += d; if (/listening/i.test(out)) { process.stdout.write('ready {"port":${port}}\\n'); out = ''; } });
child.on('exit', (c) => process.exit(c ?? 1));
process.on('SIGTERM', () => child.kill('SIGTERM'));
`;
}

function round3(n: number): number {
  return Number(n.toFixed(3));
}

/** A gateway child under test: its label (receipt storage), URL, agent token and calls sent to it. */
export interface Gateway {
  label: string;
  child: ReadyChild<{ port: number; token: string }>;
  url: string;
  calls: { calls: number };
  dispose?: () => Promise<void>;
  /** A reference proxy (bench/fixtures/bare-gateway.mjs): passthrough only, no agent token. */
  reference?: boolean;
}

function summarise(runs: LoopResult[]): LoopResult {
  const n = runs.length;
  return {
    requests: runs.reduce((a, r) => a + r.requests, 0),
    requestsPerSec: runs.reduce((a, r) => a + r.requestsPerSec, 0) / n,
    p50Ms: runs.reduce((a, r) => a + r.p50Ms, 0) / n,
    p99Ms: runs.reduce((a, r) => a + r.p99Ms, 0) / n,
    errors: runs.reduce((a, r) => a + r.errors, 0),
    non2xx: 0,
  };
}

async function benchUpstream(name: string, upstreamUrl: string, gateways: Gateway[]): Promise<Record<string, unknown>> {
  const none = { calls: 0 };
  const direct: Target = { url: upstreamUrl, headers: await initialize(upstreamUrl, {}), tool: 'echo' };
  const targets: Array<{ key: string; target: Target; counter: { calls: number }; pid: number }> = [];
  for (const g of gateways) {
    if (g.reference) {
      const url = `${g.url}/mcp/p/${name}`;
      targets.push({
        key: `reference_${g.label}`,
        target: { url, headers: await initialize(url, {}), tool: 'echo' },
        counter: g.calls,
        pid: g.child.child.pid!,
      });
      continue;
    }
    const auth = { authorization: `Bearer ${g.child.info.token}` };
    const passUrl = `${g.url}/mcp/p/${name}`;
    const pid = g.child.child.pid!;
    targets.push({
      key: `passthrough_${g.label}`,
      target: { url: passUrl, headers: await initialize(passUrl, auth), tool: 'echo' },
      counter: g.calls,
      pid,
    });
    targets.push({
      key: `aggregate_${g.label}`,
      target: {
        url: `${g.url}/mcp`,
        headers: { ...auth, 'mcp-protocol-version': PROTOCOL_VERSION },
        tool: `${name}__echo`,
      },
      counter: g.calls,
      pid,
    });
  }

  // Warm every path (JIT, keep-alive connections, the pool's upstream session).
  await run(direct, 8, 1, none);
  for (const t of targets) await run(t.target, 8, 1, t.counter);

  const out: Record<string, Record<string, unknown>> = {};
  for (const c of [1, HIGH]) {
    // Direct before and after the gateway runs: the baseline is their mean, so drift hits both alike.
    const before = await run(direct, c, DURATION_S, none);
    const via: Record<string, LoopResult> = {};
    /** The gateway process's CPU per answered call: the figure machine load disturbs least. */
    const cpuPerCall: Record<string, number> = {};
    for (const t of targets) {
      const cpu0 = cpuSeconds(t.pid);
      const result = await run(t.target, c, DURATION_S, t.counter);
      via[t.key] = result;
      cpuPerCall[t.key] = ((cpuSeconds(t.pid) - cpu0) * 1e6) / Math.max(1, result.requests);
    }
    const base = summarise([before, await run(direct, c, DURATION_S, none)]);
    const d = (out['direct'] ??= {});
    if (c === 1)
      Object.assign(d, { c1_p50_ms: round3(base.p50Ms), c1_p99_ms: round3(base.p99Ms), errors: base.errors });
    else
      Object.assign(d, {
        [`c${c}_rps`]: Math.round(base.requestsPerSec),
        [`c${c}_p99_ms`]: round3(base.p99Ms),
        errors: Number(d['errors'] ?? 0) + base.errors,
      });
    for (const [key, r] of Object.entries(via)) {
      const o = (out[key] ??= { errors: 0 });
      o['errors'] = Number(o['errors']) + r.errors;
      const cpu = Math.round(cpuPerCall[key] ?? Number.NaN);
      if (c === 1)
        Object.assign(o, {
          c1_p50_ms: r.p50Ms,
          c1_p99_ms: r.p99Ms,
          added_p50_ms: round3(r.p50Ms - base.p50Ms),
          added_p99_ms: round3(r.p99Ms - base.p99Ms),
          c1_gateway_cpu_us_per_call: cpu,
        });
      else
        Object.assign(o, {
          [`c${c}_rps`]: Math.round(r.requestsPerSec),
          [`c${c}_p99_ms`]: r.p99Ms,
          throughput_ratio: round3(r.requestsPerSec / base.requestsPerSec),
          [`c${c}_gateway_cpu_us_per_call`]: cpu,
        });
    }
  }
  return out;
}

/**
 * Starts a gateway child labelled by its receipt storage (`memory`, `pglite[-async]`,
 * `postgres[-async]`, the latter in a fresh database under BENCH_DATABASE_URL). `root` is the tree
 * whose fixture runs (bench/ab.ts runs another commit's).
 */
export async function startGateway(
  label: string,
  providers: Record<string, string>,
  dir: string,
  root = '.',
): Promise<Gateway> {
  const [store, durability] = label.split('-');
  const env: NodeJS.ProcessEnv = {
    PROVIDERS: JSON.stringify(providers),
    DATA_DIR: join(dir, label),
    RECEIPTS: store === 'memory' ? 'memory' : (durability ?? RECEIPTS),
    PORT: '0',
  };
  let dispose: (() => Promise<void>) | undefined;
  if (store === 'postgres') {
    const created = await createPostgresDatabase(process.env['BENCH_DATABASE_URL']!, 'plaza_bench_gw');
    env['DATABASE_URL'] = created.url;
    dispose = created.drop;
  }
  // Run as that tree's `plaza serve` runs: types stripped by Node where its bin/plaza.mjs does so
  // (and this Node can), else through tsx's loader (older commits, for bench/ab.ts).
  const native =
    process.features.typescript &&
    readFileSync(join(root, 'bin/plaza.mjs'), 'utf8').includes('process.features.typescript');
  const loader = native ? [] : ['--import', 'tsx'];
  const child = await spawnReady<{ port: number; token: string }>(
    process.execPath,
    [...GATEWAY_NODE_ARGS, ...loader, join(root, 'bench/fixtures/gateway-server.ts')],
    env,
  );
  return { label, child, url: `http://127.0.0.1:${child.info.port}`, calls: { calls: 0 }, dispose };
}

/** Starts the reference proxy (`bare`, or `bare-postgres` with its receipt rows in a fresh database under BENCH_DATABASE_URL). */
async function startReference(label: string, providers: Record<string, string>): Promise<Gateway> {
  const env: NodeJS.ProcessEnv = { PROVIDERS: JSON.stringify(providers), PORT: '0' };
  let dispose: (() => Promise<void>) | undefined;
  if (label === 'bare-postgres') {
    const created = await createPostgresDatabase(process.env['BENCH_DATABASE_URL']!, 'plaza_bench_bare');
    env['DATABASE_URL'] = created.url;
    dispose = created.drop;
  }
  const child = await spawnReady<{ port: number; token: string }>(
    process.execPath,
    ['bench/fixtures/bare-gateway.mjs'],
    env,
  );
  return { label, child, url: `http://127.0.0.1:${child.info.port}`, calls: { calls: 0 }, dispose, reference: true };
}

/** Runs the gateway benchmark and returns its figures. */
export async function benchGateway(): Promise<Record<string, unknown>> {
  const dir = mkdtempSync(join(tmpdir(), 'plaza-bench-gateway-'));
  const upstreams: Array<Awaited<ReturnType<typeof startUpstream>>> = [];
  const gateways: Gateway[] = [];
  try {
    for (const name of UPSTREAMS) upstreams.push(await startUpstream(name));
    const providers = Object.fromEntries(UPSTREAMS.map((name, i) => [name, upstreams[i]!.url]));
    const labels = [
      ...GATEWAYS,
      ...(process.env['BENCH_DATABASE_URL'] && !GATEWAYS.some((g) => g.startsWith('postgres'))
        ? ['postgres', 'postgres-async']
        : []),
    ];
    for (const label of labels) gateways.push(await startGateway(label, providers, dir));
    const references =
      process.env['BENCH_REFERENCE'] === '0'
        ? []
        : ['bare', ...(process.env['BENCH_DATABASE_URL'] ? ['bare-postgres'] : [])];
    for (const label of references) gateways.push(await startReference(label, providers));
    const results: Record<string, unknown> = {};
    for (const name of UPSTREAMS) results[name] = await benchUpstream(name, providers[name]!, gateways);
    const receipts: Record<string, unknown> = {};
    for (const g of gateways.filter((g) => !g.reference)) {
      const stats = (await (await fetch(`${g.url}/stats`)).json()) as {
        receipts_in_database: number;
        memory_receipts: number;
        record_failures: number;
      };
      const stored = g.label === 'memory' ? stats.memory_receipts : stats.receipts_in_database;
      receipts[g.label] = {
        calls: g.calls.calls,
        receipts: stored,
        equal: stored === g.calls.calls,
        record_failures: stats.record_failures,
      };
    }
    const figures = {
      duration_s_per_phase: DURATION_S,
      concurrency: [1, HIGH],
      receipts_durability: RECEIPTS,
      gateways: labels,
      references,
      ...results,
      receipts,
      targets: { added_p50_ms: 1, added_p99_ms: 5, throughput_ratio: 0.7 },
    };
    saveResult('gateway', figures);
    return figures;
  } finally {
    for (const g of gateways) {
      await g.child.stop();
      await g.dispose?.();
    }
    for (const u of upstreams) await u.stop();
    await closeLoadPool();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.main) console.log(JSON.stringify(await benchGateway(), null, 2));
