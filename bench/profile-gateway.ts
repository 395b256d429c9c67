/**
 * Where one gateway call's CPU goes: one path (Plaza's `/mcp/p/<provider>` or `/mcp`, or a
 * reference) in front of the mini upstream, driven at c=32 for BENCH_DURATION_S (10) after a
 * warm-up, its process under `--cpu-prof`; then prints the profile's busy time per call, by module
 * and by function, over the load window only (start-up and shutdown left out).
 * Run: `node --import tsx bench/profile-gateway.ts <path>` where path is `passthrough_<gateway>`,
 * `aggregate_<gateway>` (gateway: postgres, pglite, memory, with `-async` as in bench/gateway.ts)
 * or `reference_<label>` (same-work-postgres, same-work-pglite, bare). BENCH_DATABASE_URL as for
 * bench/gateway.ts. BENCH_PROFILE_DIR keeps the .cpuprofile (default: a temporary folder).
 * BENCH_PROFILE_STRACE=1 also counts the process's system calls over the window (`strace -c -f`),
 * per call: a figure no other process on the machine can move.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { summariseCpuProfile } from './cpu-profile.ts';
import { cpuSeconds, loadLoop, sampleRss } from './lib.ts';

const [path] = process.argv.slice(2);
if (!path || !/^(passthrough|aggregate|reference)_/.test(path))
  throw new Error('usage: bench/profile-gateway.ts passthrough_<gateway> | aggregate_<gateway> | reference_<label>');
const DURATION_S = Number(process.env['BENCH_DURATION_S'] ?? 10);
const profileDir = process.env['BENCH_PROFILE_DIR'] ?? mkdtempSync(join(tmpdir(), 'plaza-prof-'));
mkdirSync(profileDir, { recursive: true });
// BENCH_PROFILE=heap: allocations instead, the collected ones included (Plaza's gateways only);
// BENCH_PROFILE=none: no profiler (the memory and system-call figures alone).
const mode = process.env['BENCH_PROFILE'] ?? 'cpu';
const heap = mode === 'heap';
const flags = mode === 'cpu' ? `--cpu-prof --cpu-prof-dir=${profileDir}` : '';
if (heap) process.env['BENCH_ALLOC_PROFILE'] = join(profileDir, 'allocations.heapprofile');
process.env['BENCH_GATEWAY_NODE_ARGS'] =
  `${process.env['BENCH_GATEWAY_NODE_ARGS'] ?? '--max-semi-space-size=16'} ${flags}`;
process.env['BENCH_REFERENCE_NODE_ARGS'] = flags;
// Imported after the flags are set: bench/gateway-processes.ts reads them when it loads.
const { startGateway, startReference, startUpstream } = await import('./gateway-processes.ts');
const { callEcho, closeLoadPool, initialize } = await import('./gateway-client.ts');

const [kind, label] = [path.slice(0, path.indexOf('_')), path.slice(path.indexOf('_') + 1)];
const dir = mkdtempSync(join(tmpdir(), 'plaza-prof-data-'));
const upstream = await startUpstream('mini');
const providers = { mini: upstream.url };
const gateway =
  kind === 'reference' ? await startReference(label, providers, dir) : await startGateway(label, providers, dir);
const auth: Record<string, string> = gateway.child.info.token
  ? { authorization: `Bearer ${gateway.child.info.token}` }
  : {};
const target =
  kind === 'aggregate'
    ? { url: `${gateway.url}/mcp`, headers: { ...auth, 'mcp-protocol-version': '2025-06-18' }, tool: 'mini__echo' }
    : { url: `${gateway.url}/mcp/p/mini`, headers: await initialize(`${gateway.url}/mcp/p/mini`, auth), tool: 'echo' };
const counter = { calls: 0 };
await loadLoop({ connections: 32, durationS: 3, send: () => callEcho(target, counter) });
const straceFile = join(profileDir, 'strace.txt');
const strace =
  process.env['BENCH_PROFILE_STRACE'] === '1'
    ? spawn('strace', ['-c', '-f', '-o', straceFile, '-p', String(gateway.child.child.pid)], { stdio: 'ignore' })
    : undefined;
if (strace) await new Promise((r) => setTimeout(r, 500));
const pid = gateway.child.child.pid!;
const rss = sampleRss(pid);
const cpuBefore = cpuSeconds(pid);
const loadStarted = Date.now();
counter.calls = 0;
const result = await loadLoop({ connections: 32, durationS: DURATION_S, send: () => callEcho(target, counter) });
const loadEnded = Date.now();
const cpuPerCall = ((cpuSeconds(pid) - cpuBefore) * 1e6) / counter.calls;
console.log(
  `${path}: ${cpuPerCall.toFixed(0)} µs CPU per call (with the profiler's own cost), peak RSS ${rss.stop()} MB under c=32`,
);
// Plaza's gateway fixture tells its memory at the end of the load (process.memoryUsage()).
if (kind !== 'reference') {
  const stats = (await (await fetch(`${gateway.url}/stats`)).json()) as {
    memory?: Record<string, number>;
    writer?: { committed: number; batches: number } | null;
  };
  if (stats.writer?.batches)
    console.log(
      `receipt batches: ${stats.writer.batches}, ${(stats.writer.committed / stats.writer.batches).toFixed(1)} receipts each (warm-up included)`,
    );
  const mb = (n: number | undefined) => `${((n ?? 0) / 1048576).toFixed(0)} MB`;
  const m = stats.memory ?? {};
  console.log(
    `memory after the load: rss ${mb(m['rss'])}, heap ${mb(m['heapUsed'])} of ${mb(m['heapTotal'])}, external ${mb(m['external'])} (array buffers ${mb(m['arrayBuffers'])})`,
  );
}
if (strace) {
  strace.kill('SIGINT');
  await once(strace, 'exit');
  printSyscalls(readFileSync(straceFile, 'utf8'), counter.calls);
}
await gateway.child.stop();
await gateway.dispose?.();
await upstream.stop();
await closeLoadPool();
rmSync(dir, { recursive: true, force: true });

const file =
  mode === 'none'
    ? '(none)'
    : readdirSync(profileDir)
        .filter((f) => f.endsWith(heap ? '.heapprofile' : '.cpuprofile'))
        .map((f) => join(profileDir, f))
        .sort()
        .at(-1)!;
if (mode === 'cpu')
  summariseCpuProfile(path, JSON.parse(readFileSync(file, 'utf8')), loadEnded - loadStarted, counter.calls);
console.log(`${result.requestsPerSec.toFixed(0)} calls/s at c=32, ${result.errors} errors; profile: ${file}`);

/** strace -c's table, as calls per gateway call and µs per gateway call, busiest first. */
function printSyscalls(table: string, calls: number): void {
  console.log(`system calls per gateway call (strace -c -f over the window, ${calls} calls):`);
  for (const line of table.split('\n')) {
    const cells = line.trim().split(/\s+/);
    // % time, seconds, usecs/call, calls, [errors], syscall
    if (cells.length < 5 || !/^[0-9.]+$/.test(cells[0]!) || cells.at(-1) === 'total') continue;
    const count = Number(cells[3]);
    const seconds = Number(cells[1]);
    console.log(
      `${(count / calls).toFixed(2).padStart(7)} × ${cells.at(-1)!.padEnd(16)} ${((seconds * 1e6) / calls).toFixed(1).padStart(7)} µs`,
    );
  }
}
