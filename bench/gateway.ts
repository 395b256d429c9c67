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
 * 32 (throughput), each path's process sampled for its CPU per answered call and its RSS. Targets
 * (bench/targets.ts, issue 36): CPU per call at c=32 with sync receipts at most 1.5× the same-work
 * reference's and below every npm peer's; RSS under c=32 at most mcp-hub's on PostgreSQL, 1.5× on
 * PGlite; added p50 <= 1 ms and p99 <= 5 ms at concurrency 1 (for `/mcp`, over the upstream called
 * directly in the revision `/mcp` speaks to it: see measureUpstream); receipts == calls. The throughput
 * over direct at c=32 is reported, no longer a target. A gateway label with `-async` (e.g.
 * `pglite-async`) writes receipts with `async` durability: the latency target names no
 * durability, and a sync receipt at concurrency 1 waits for one database commit (an fsync).
 * Run: `node --import tsx bench/gateway.ts`. Env: BENCH_DURATION_S per phase (default 3),
 * BENCH_UPSTREAMS (mini,everything), BENCH_GATEWAYS (pglite,pglite-async,memory; postgres and
 * postgres-async are added when BENCH_DATABASE_URL is set), BENCH_DATABASE_URL,
 * BENCH_RECEIPTS (sync | async), BENCH_GATEWAY_NODE_ARGS (e.g. --cpu-prof), BENCH_REFERENCES
 * (bare,same-work-postgres,same-work-pglite; bare-postgres too) or BENCH_REFERENCE=0, BENCH_PEERS
 * (mcp-hub,mcp-proxy,civic-passthrough; '' for none).
 *
 * References run beside the gateways: bench/fixtures/bare-gateway.mjs, the least a gateway must
 * do per call (identity, one Ed25519 assertion, forward, stamp, digest) and nothing else
 * (`reference_bare`: what this machine allows a gateway at all), and the same with the caller's
 * agent token checked and a receipt row group-committed before each answer
 * (`reference_same-work-postgres` when BENCH_DATABASE_URL is set, `reference_same-work-pglite`):
 * the cheapest proxy doing Plaza's per-call work. The npm peers (bench/gateway-peers.ts) front
 * each upstream in processes of their own, started and stopped per upstream (`peer_<name>`).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';

import { DEFAULT_SESSION_REVISION } from '../gateway/index.ts';
import {
  callEcho,
  closeLoadPool,
  initialize,
  PROTOCOL_VERSION,
  streamableCaller,
  type Target,
} from './gateway-client.ts';
import { type Path, peerPath, runPath, summarise, targetPath } from './gateway-paths.ts';
import { GATEWAY_PEER_NOTES, GATEWAY_PEERS, type GatewayPeer, startGatewayPeer } from './gateway-peers.ts';
import { type Gateway, RECEIPTS, startGateway, startReference, startUpstream } from './gateway-processes.ts';
import { cpuSeconds, loadLoop, type LoopResult, sampleRss, saveResult } from './lib.ts';

const DURATION_S = Number(process.env['BENCH_DURATION_S'] ?? 3);
const UPSTREAMS = (process.env['BENCH_UPSTREAMS'] ?? 'mini,everything').split(',').filter(Boolean);
/** Gateway children: `pglite` and `postgres` store receipts (RECEIPTS durability, or async with an `-async` suffix), `memory` only counts them. */
const GATEWAYS = (process.env['BENCH_GATEWAYS'] ?? 'pglite,pglite-async,memory').split(',').filter(Boolean);
const HIGH = 32;

function run(target: Target, connections: number, durationS: number, counter: { calls: number }): Promise<LoopResult> {
  return loadLoop({ connections, durationS, send: () => callEcho(target, counter) });
}

function round3(n: number): number {
  return Number(n.toFixed(3));
}

async function benchUpstream(
  name: string,
  upstreamUrl: string,
  gateways: Gateway[],
  dir: string,
): Promise<Record<string, unknown>> {
  const none = { calls: 0 };
  const direct: Target = { url: upstreamUrl, headers: await initialize(upstreamUrl, {}), tool: 'echo' };
  // `/mcp` speaks to the upstream in the newest revision both share (gateway/upstream/revisions.ts),
  // whatever the caller's: its added latency is measured over the upstream in that revision
  // (server-everything answers ~1.2 ms slower in 2025-11-25 than in 2025-06-18, with or without Plaza).
  const poolDirect: Target = {
    url: upstreamUrl,
    headers: await initialize(upstreamUrl, {}, DEFAULT_SESSION_REVISION),
    tool: 'echo',
  };
  const paths: Path[] = [];
  for (const g of gateways) {
    const pid = g.child.child.pid!;
    const auth: Record<string, string> = g.child.info.token ? { authorization: `Bearer ${g.child.info.token}` } : {};
    const passUrl = `${g.url}/mcp/p/${name}`;
    if (g.reference) {
      const target = { url: passUrl, headers: await initialize(passUrl, auth), tool: 'echo' };
      paths.push(targetPath(`reference_${g.label}`, target, g.calls, pid));
      continue;
    }
    paths.push(
      targetPath(
        `passthrough_${g.label}`,
        { url: passUrl, headers: await initialize(passUrl, auth), tool: 'echo' },
        g.calls,
        pid,
      ),
    );
    paths.push(
      targetPath(
        `aggregate_${g.label}`,
        { url: `${g.url}/mcp`, headers: { ...auth, 'mcp-protocol-version': PROTOCOL_VERSION }, tool: `${name}__echo` },
        g.calls,
        pid,
      ),
    );
  }
  // The peers front this upstream alone, each in its own process, started and stopped here.
  const peers: GatewayPeer[] = [];
  try {
    for (const peer of GATEWAY_PEERS) {
      const started = await startGatewayPeer(peer, name, upstreamUrl, dir, streamableCaller);
      peers.push(started);
      paths.push(peerPath(started));
    }
    return await measureUpstream({ client: direct, pool: poolDirect }, none, paths);
  } finally {
    for (const p of peers) await p.stop();
  }
}

/**
 * Runs every path at c=1 and c=32 between two direct phases; the figures per path. `direct.pool`
 * is the upstream in the revision `/mcp` speaks to it, the c=1 baseline of the aggregate paths.
 */
async function measureUpstream(direct: { client: Target; pool: Target }, none: { calls: number }, paths: Path[]) {
  // Warm every path (JIT, keep-alive connections, the pool's upstream session).
  await run(direct.client, 8, 1, none);
  await run(direct.pool, 8, 1, none);
  for (const p of paths) await runPath(p, 8, 1);

  const out: Record<string, Record<string, unknown>> = {};
  for (const c of [1, HIGH]) {
    // Direct before and after the gateway runs: the baseline is their mean, so drift hits both alike.
    const before = await run(direct.client, c, DURATION_S, none);
    const poolBefore = c === 1 ? await run(direct.pool, c, DURATION_S, none) : undefined;
    const via: Record<string, LoopResult> = {};
    /** The proxy process's CPU per answered call: the figure machine load disturbs least. */
    const cpuPerCall: Record<string, number> = {};
    const rss: Record<string, number> = {};
    for (const p of paths) {
      const send = await p.prepare(c);
      const cpu0 = cpuSeconds(p.pid);
      const sampler = sampleRss(p.pid);
      const result = await loadLoop({ connections: c, durationS: DURATION_S, send });
      rss[p.key] = sampler.stop();
      via[p.key] = result;
      cpuPerCall[p.key] = ((cpuSeconds(p.pid) - cpu0) * 1e6) / Math.max(1, result.requests);
    }
    const base = summarise([before, await run(direct.client, c, DURATION_S, none)]);
    const poolBase = poolBefore && summarise([poolBefore, await run(direct.pool, c, DURATION_S, none)]);
    const d = (out['direct'] ??= {});
    if (c === 1)
      Object.assign(d, {
        c1_p50_ms: round3(base.p50Ms),
        c1_p99_ms: round3(base.p99Ms),
        errors: base.errors,
        pool_revision: direct.pool.headers['mcp-protocol-version'],
        pool_revision_c1_p50_ms: round3(poolBase!.p50Ms),
        pool_revision_c1_p99_ms: round3(poolBase!.p99Ms),
      });
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
      // The aggregate's upstream exchange is in the pool's revision: so is its baseline.
      const c1Base = key.startsWith('aggregate_') ? poolBase! : base;
      if (c === 1)
        Object.assign(o, {
          c1_p50_ms: r.p50Ms,
          c1_p99_ms: r.p99Ms,
          added_p50_ms: round3(r.p50Ms - c1Base.p50Ms),
          added_p99_ms: round3(r.p99Ms - c1Base.p99Ms),
          ...(c1Base === base ? {} : { added_p50_ms_over_client_revision: round3(r.p50Ms - base.p50Ms) }),
          c1_gateway_cpu_us_per_call: cpu,
        });
      else
        Object.assign(o, {
          [`c${c}_rps`]: Math.round(r.requestsPerSec),
          [`c${c}_p99_ms`]: r.p99Ms,
          throughput_ratio: round3(r.requestsPerSec / base.requestsPerSec),
          [`c${c}_gateway_cpu_us_per_call`]: cpu,
          [`c${c}_rss_mb`]: rss[key],
        });
    }
  }
  return out;
}

/** References run beside the gateways (BENCH_REFERENCES, or BENCH_REFERENCE=0 for none). */
function referenceLabels(): string[] {
  if (process.env['BENCH_REFERENCE'] === '0') return [];
  if (process.env['BENCH_REFERENCES']) return process.env['BENCH_REFERENCES'].split(',').filter(Boolean);
  return ['bare', ...(process.env['BENCH_DATABASE_URL'] ? ['same-work-postgres'] : []), 'same-work-pglite'];
}

/** Runs the gateway benchmark and returns its figures. */
export async function benchGateway(): Promise<Record<string, unknown>> {
  const dir = mkdtempSync(join(tmpdir(), 'plaza-bench-gateway-'));
  const loadBefore = loadavg()[0]!;
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
    const references = referenceLabels();
    for (const label of references) gateways.push(await startReference(label, providers, dir));
    const results: Record<string, unknown> = {};
    for (const name of UPSTREAMS) results[name] = await benchUpstream(name, providers[name]!, gateways, dir);
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
    // The references commit a receipt row per call too: the count says they did the work.
    for (const g of gateways.filter((g) => g.reference && g.label !== 'bare')) {
      const stats = (await (await fetch(`${g.url}/stats`)).json()) as { receipts_in_database: number | null };
      receipts[`reference_${g.label}`] = {
        calls: g.calls.calls,
        receipts: stats.receipts_in_database,
        equal: stats.receipts_in_database === g.calls.calls,
      };
    }
    const figures = {
      duration_s_per_phase: DURATION_S,
      concurrency: [1, HIGH],
      receipts_durability: RECEIPTS,
      gateways: labels,
      references,
      peers: Object.fromEntries(GATEWAY_PEERS.map((p) => [p, GATEWAY_PEER_NOTES[p]])),
      load_average_1m: { before: Number(loadBefore.toFixed(2)), after: Number(loadavg()[0]!.toFixed(2)) },
      ...results,
      receipts,
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
