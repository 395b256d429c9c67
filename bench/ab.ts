/**
 * A/B: this tree against another commit, side by side in one run. Single runs on a shared 2-core
 * machine move by ±20%, so a before/after pair of `npm run bench` runs says little about a change
 * of 10%; here both trees serve at once and alternate 3 s rounds at concurrency 32 (A B, B A, …),
 * so drift hits both alike. Per round: requests/s, the server process's CPU µs per request and its
 * resident memory at the round's end.
 *
 * Run: `node --import tsx bench/ab.ts <git-ref> [gateway|chat|receipts]` (default gateway). The
 * ref is checked out into a temporary worktree (with this tree's node_modules and a Prisma client
 * generated from its own schema), started with its own fixture or `plaza serve`, and removed at the end.
 * Env: AB_ROUNDS (4), AB_DURATION_S (3); gateway: AB_UPSTREAM (everything | mini),
 * AB_RECEIPTS (memory | pglite | pglite-async | postgres | postgres-async; postgres needs
 * BENCH_DATABASE_URL, a fresh database per tree); AB_MODERN=1 adds a side calling this tree's
 * `/mcp` in revision 2026-07-28 (the `_meta` envelope and its headers; the other tree may not speak it).
 * `receipts` times the receipt log's append path alone (bench/fixtures/receipts-append.ts): per
 * round and tree, AB_BATCHES (1000) batches of 1 and of 10 receipts one after another, on PGlite
 * and, with BENCH_DATABASE_URL, on a fresh PostgreSQL database; wall µs and CPU µs per batch.
 */
import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

import { createPostgresDatabase } from '../test/support/databases.ts';
import { completion, startChatPlaza } from './chat-proxy.ts';
import { callEcho, closeLoadPool, initialize, type Target } from './gateway-client.ts';
import { type Gateway, startGateway, startUpstream } from './gateway-processes.ts';
import { checkout, cpuSeconds, loadLoop, median, ROOT, rssMb, spawnReady } from './lib.ts';

const REF = process.argv[2];
const MODE = process.argv[3] ?? 'gateway';
const ROUNDS = Number(process.env['AB_ROUNDS'] ?? 4);
const DURATION_S = Number(process.env['AB_DURATION_S'] ?? 3);

/** One side's way of being called, and the process whose CPU is counted. */
interface Side {
  name: string;
  pid: number;
  send: () => Promise<boolean>;
}

async function alternate(
  sides: Side[],
): Promise<Record<string, { rps: number[]; cpu_us: number[]; rss_mb: number[] }>> {
  const rows = Object.fromEntries(
    sides.map((s) => [s.name, { rps: [] as number[], cpu_us: [] as number[], rss_mb: [] as number[] }]),
  );
  for (const side of sides) await loadLoop({ connections: 8, durationS: 1, send: side.send });
  for (let round = 0; round < ROUNDS; round++) {
    for (const side of round % 2 ? [...sides].reverse() : sides) {
      const before = cpuSeconds(side.pid);
      const result = await loadLoop({ connections: 32, durationS: DURATION_S, send: side.send });
      rows[side.name]!.rps.push(Math.round(result.requestsPerSec));
      rows[side.name]!.cpu_us.push(Math.round(((cpuSeconds(side.pid) - before) * 1e6) / Math.max(1, result.requests)));
      rows[side.name]!.rss_mb.push(Math.round(rssMb(side.pid)));
    }
  }
  return rows;
}

async function gatewaySides(
  trees: Record<string, string>,
  dir: string,
  stops: Array<() => Promise<void>>,
): Promise<Side[]> {
  const upstreamName = process.env['AB_UPSTREAM'] ?? 'everything';
  const upstream = await startUpstream(upstreamName);
  stops.push(() => upstream.stop());
  const label = process.env['AB_RECEIPTS'] ?? 'memory';
  const sides: Side[] = [];
  for (const [name, root] of Object.entries(trees)) {
    const gateway: Gateway = await startGateway(label, { [upstreamName]: upstream.url }, join(dir, name), root);
    stops.unshift(async () => {
      await gateway.child.stop();
      await gateway.dispose?.();
    });
    const auth = { authorization: `Bearer ${gateway.child.info.token}` };
    const pass: Target = {
      url: `${gateway.url}/mcp/p/${upstreamName}`,
      headers: await initialize(`${gateway.url}/mcp/p/${upstreamName}`, auth),
      tool: 'echo',
    };
    const agg: Target = {
      url: `${gateway.url}/mcp`,
      headers: { ...auth, 'mcp-protocol-version': '2025-06-18' },
      tool: `${upstreamName}__echo`,
    };
    sides.push({
      name: `${name} passthrough`,
      pid: gateway.child.child.pid!,
      send: () => callEcho(pass, gateway.calls),
    });
    sides.push({ name: `${name} aggregate`, pid: gateway.child.child.pid!, send: () => callEcho(agg, gateway.calls) });
    if (name === 'this' && process.env['AB_MODERN'] === '1') {
      const modern: Target = {
        url: `${gateway.url}/mcp`,
        headers: {
          ...auth,
          'mcp-protocol-version': '2026-07-28',
          'mcp-method': 'tools/call',
          'mcp-name': `${upstreamName}__echo`,
        },
        tool: `${upstreamName}__echo`,
        meta: {
          'io.modelcontextprotocol/protocolVersion': '2026-07-28',
          'io.modelcontextprotocol/clientInfo': { name: 'plaza-bench', version: '1' },
          'io.modelcontextprotocol/clientCapabilities': {},
        },
      };
      sides.push({
        name: `${name} aggregate 2026-07-28`,
        pid: gateway.child.child.pid!,
        send: () => callEcho(modern, gateway.calls),
      });
    }
  }
  return sides;
}

async function chatSides(
  trees: Record<string, string>,
  dir: string,
  stops: Array<() => Promise<void>>,
): Promise<Side[]> {
  const upstream = await spawnReady<number>(process.execPath, ['bench/fixtures/openai-upstream.mjs'], { PORT: '0' });
  stops.push(() => upstream.stop());
  const sides: Side[] = [];
  let port = 18_310;
  for (const [name, root] of Object.entries(trees)) {
    const plaza = await startChatPlaza(root, mkdtempSync(join(dir, `${name}-`)), port++, upstream.info);
    stops.unshift(() => plaza.stop());
    const token = (
      (await (await fetch(`${plaza.url}/api/auth/guest-token`, { method: 'POST' })).json()) as {
        data: { token: string };
      }
    ).data.token;
    const url = `${plaza.url}/api/v1/chat/completions`;
    sides.push({ name, pid: plaza.child.pid!, send: async () => (await completion(url, token)).ok });
  }
  return sides;
}

/** Per round, tree, database and batch size: one run of the append fixture (fresh database each). */
async function receiptRows(
  trees: Record<string, string>,
): Promise<Record<string, { batch_us: number[]; cpu_us: number[] }>> {
  const batches = Number(process.env['AB_BATCHES'] ?? 1000);
  if (!(Number.isInteger(batches) && batches >= 1)) throw new Error('AB_BATCHES must be a whole number >= 1');
  const base = process.env['BENCH_DATABASE_URL'];
  const rows: Record<string, { batch_us: number[]; cpu_us: number[] }> = {};
  const names = Object.keys(trees);
  for (let round = 0; round < ROUNDS; round++) {
    for (const name of round % 2 ? [...names].reverse() : names) {
      for (const store of base ? ['pglite', 'postgres'] : ['pglite']) {
        for (const size of [1, 10]) {
          const created = store === 'postgres' ? await createPostgresDatabase(base, 'plaza_bench_ab') : undefined;
          try {
            const { stdout } = await promisify(execFile)(
              process.execPath,
              [
                'bench/fixtures/receipts-append.ts',
                trees[name]!,
                created?.url ?? 'pglite',
                String(size),
                String(batches),
              ],
              { cwd: ROOT },
            );
            const result = JSON.parse(stdout.trim().split('\n').at(-1)!) as { batch_us: number; cpu_us: number };
            const row = (rows[`${name} ${store} batch ${size}`] ??= { batch_us: [], cpu_us: [] });
            row.batch_us.push(result.batch_us);
            row.cpu_us.push(result.cpu_us);
          } finally {
            await created?.drop();
          }
        }
      }
    }
  }
  return rows;
}

if (
  !REF ||
  !['gateway', 'chat', 'receipts'].includes(MODE) ||
  !(Number.isInteger(ROUNDS) && ROUNDS >= 1) ||
  !(DURATION_S > 0)
) {
  console.error(
    'usage: node --import tsx bench/ab.ts <git-ref> [gateway|chat|receipts] (AB_ROUNDS a whole number >= 1, AB_DURATION_S > 0)',
  );
  process.exit(2);
}
const dir = mkdtempSync(join(tmpdir(), 'plaza-ab-'));
const stops: Array<() => Promise<void>> = [];
let tree: string | undefined;
try {
  tree = checkout(REF, dir);
  const trees = { [REF]: tree, this: ROOT };
  if (MODE === 'receipts') {
    const rows = await receiptRows(trees);
    const summary = Object.fromEntries(
      Object.entries(rows).map(([name, r]) => [
        name,
        { ...r, median_batch_us: median(r.batch_us), median_cpu_us: median(r.cpu_us) },
      ]),
    );
    console.log(JSON.stringify({ ref: REF, mode: MODE, rounds: ROUNDS, sides: summary }, null, 2));
  } else {
    const sides = MODE === 'chat' ? await chatSides(trees, dir, stops) : await gatewaySides(trees, dir, stops);
    const rows = await alternate(sides);
    const summary = Object.fromEntries(
      Object.entries(rows).map(([name, r]) => [
        name,
        { ...r, median_rps: median(r.rps), median_cpu_us: median(r.cpu_us), max_rss_mb: Math.max(...r.rss_mb) },
      ]),
    );
    console.log(
      JSON.stringify({ ref: REF, mode: MODE, rounds: ROUNDS, duration_s: DURATION_S, sides: summary }, null, 2),
    );
  }
} finally {
  for (const stop of stops) await stop().catch(() => undefined);
  await closeLoadPool();
  if (tree) execFileSync('git', ['-C', ROOT, 'worktree', 'remove', '--force', tree], { stdio: 'ignore' });
  rmSync(dir, { recursive: true, force: true });
}
// The chat client's keep-alive pool (chat-proxy.ts) would hold the process open.
process.exit(process.exitCode ?? 0);
