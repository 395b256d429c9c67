/**
 * The processes the gateway benchmark measures: the upstreams (the mini JSON-RPC server,
 * server-everything), Plaza's gateway fixture per receipt storage, and the reference proxies.
 * Node flags come from BENCH_GATEWAY_NODE_ARGS and BENCH_REFERENCE_NODE_ARGS, read when this
 * module loads (bench/profile-gateway.ts sets them first).
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

import { createPostgresDatabase } from '../test/support/databases.ts';
import { type ReadyChild, spawnReady, startScriptEnv } from './lib.ts';

/** Durability of the gateways' receipts (BENCH_RECEIPTS) unless a label says `-async`. */
export const RECEIPTS = process.env['BENCH_RECEIPTS'] ?? 'sync';
/**
 * Node flags of the gateway child: by default those `npm start` gives `plaza serve` (a 32 MB young
 * generation); e.g. add `--cpu-prof --cpu-prof-dir=/tmp/prof` to see where its time goes.
 */
const GATEWAY_NODE_ARGS = (process.env['BENCH_GATEWAY_NODE_ARGS'] ?? '--max-semi-space-size=16')
  .split(' ')
  .filter(Boolean);
/** Node flags of the reference children (none by default; e.g. `--cpu-prof` as for the gateway). */
const REFERENCE_NODE_ARGS = (process.env['BENCH_REFERENCE_NODE_ARGS'] ?? '').split(' ').filter(Boolean);

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
    // The C allocator's settings as `npm start` gives them, from that tree's package.json.
    ...startScriptEnv(root),
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

/**
 * Starts a reference proxy (bench/fixtures/bare-gateway.mjs): `bare` (the per-call essentials),
 * `bare-postgres` (and a receipt row committed to PostgreSQL), `same-work-postgres` and
 * `same-work-pglite` (the work Plaza's gateway does per call, issue 36: the agent's bearer token
 * checked, its identity stamped and asserted, a receipt row committed before the answer, on a
 * fresh PostgreSQL database under BENCH_DATABASE_URL or an embedded PGlite data folder in `dir`).
 */
export async function startReference(label: string, providers: Record<string, string>, dir: string): Promise<Gateway> {
  const env: NodeJS.ProcessEnv = { PROVIDERS: JSON.stringify(providers), PORT: '0' };
  let dispose: (() => Promise<void>) | undefined;
  let token: string | undefined;
  if (label.startsWith('same-work')) {
    const alphabet = '0123456789abcdefghijklmnopqrstuvwxyz';
    const pick = (n: number) => Array.from(randomBytes(n), (b) => alphabet[b % 36]).join('');
    token = `agt_${pick(13)}_${pick(40)}`;
    env['AGENT_TOKEN'] = token;
  }
  if (label.endsWith('-postgres')) {
    const created = await createPostgresDatabase(process.env['BENCH_DATABASE_URL']!, 'plaza_bench_bare');
    env['DATABASE_URL'] = created.url;
    dispose = created.drop;
  } else if (label.endsWith('-pglite')) env['DATABASE_URL'] = `pglite:${join(dir, label)}`;
  else if (label !== 'bare') throw new Error(`unknown reference ${label}`);
  const child = await spawnReady<{ port: number; token: string }>(
    process.execPath,
    [...REFERENCE_NODE_ARGS, 'bench/fixtures/bare-gateway.mjs'],
    env,
  );
  if (token) child.info.token = token;
  return { label, child, url: `http://127.0.0.1:${child.info.port}`, calls: { calls: 0 }, dispose, reference: true };
}
