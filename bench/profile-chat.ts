/**
 * Where one streamed completion's CPU goes: Plaza's chat proxy (`plaza serve`, embedded storage)
 * or the essentials reference, in front of the local OpenAI-like upstream, driven at c=32 for
 * BENCH_DURATION_S (10) after a warm-up, its process under `--cpu-prof`; prints busy µs per
 * completion by module and by function over the load window (bench/cpu-profile.ts).
 * Run: `node --import tsx bench/profile-chat.ts plaza|essentials`. BENCH_PROFILE=none runs no
 * profiler (the CPU per completion from /proc alone); BENCH_PROFILE_DIR keeps the .cpuprofile.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { summariseCpuProfile } from './cpu-profile.ts';
import { cpuSeconds, loadLoop, sampleRss, spawnReady } from './lib.ts';

const [which] = process.argv.slice(2);
if (which !== 'plaza' && which !== 'essentials') throw new Error('usage: bench/profile-chat.ts plaza | essentials');
const DURATION_S = Number(process.env['BENCH_DURATION_S'] ?? 10);
const profileDir = process.env['BENCH_PROFILE_DIR'] ?? mkdtempSync(join(tmpdir(), 'plaza-prof-'));
mkdirSync(profileDir, { recursive: true });
const profiled = (process.env['BENCH_PROFILE'] ?? 'cpu') === 'cpu';
const flags = profiled ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [];
if (which === 'plaza') process.env['BENCH_PLAZA_NODE_ARGS'] = ['--max-semi-space-size=16', ...flags].join(' ');
// Imported after the flags are set: bench/chat-proxy.ts reads them when it starts Plaza.
const { completion, startChatPlaza } = await import('./chat-proxy.ts');

const upstream = await spawnReady<number>(process.execPath, ['bench/fixtures/openai-upstream.mjs'], { PORT: '0' });
const dir = mkdtempSync(join(tmpdir(), 'plaza-prof-chat-'));
let server: { pid: number; url: string; token: string; stop(): Promise<void> };
if (which === 'plaza') {
  const plaza = await startChatPlaza('.', dir, 18099, upstream.info);
  const res = await fetch(`${plaza.url}/api/auth/guest-token`, { method: 'POST' });
  const token = ((await res.json()) as { data: { token: string } }).data.token;
  server = { pid: plaza.child.pid!, url: `${plaza.url}/api/v1/chat/completions`, token, stop: () => plaza.stop() };
} else {
  const child = await spawnReady<{ port: number; token: string }>(
    process.execPath,
    [...flags, 'bench/fixtures/essential-chat-proxy.mjs'],
    { UPSTREAM_URL: `http://127.0.0.1:${upstream.info}`, PORT: '0' },
  );
  const url = `http://127.0.0.1:${child.info.port}/v1/chat/completions`;
  server = { pid: child.child.pid!, url, token: child.info.token, stop: () => child.stop() };
}
const send = async () => (await completion(server.url, server.token)).ok;
await loadLoop({ connections: 32, durationS: 3, send });
const rss = sampleRss(server.pid);
const cpuBefore = cpuSeconds(server.pid);
const started = Date.now();
const result = await loadLoop({ connections: 32, durationS: DURATION_S, send });
const windowMs = Date.now() - started;
const perCompletion = ((cpuSeconds(server.pid) - cpuBefore) * 1e6) / result.requests;
console.log(
  `${which}: ${perCompletion.toFixed(0)} µs CPU per completion${profiled ? ' (with the profiler’s own cost)' : ''}, peak RSS ${rss.stop()} MB, ${result.requestsPerSec.toFixed(0)}/s, ${result.errors} errors`,
);
await server.stop();
await upstream.stop();
rmSync(dir, { recursive: true, force: true });
if (profiled) {
  const file = readdirSync(profileDir)
    .filter((f) => f.endsWith('.cpuprofile'))
    .map((f) => join(profileDir, f))
    .sort()
    .at(-1)!;
  summariseCpuProfile(which, JSON.parse(readFileSync(file, 'utf8')), windowMs, result.requests);
  console.log(`profile: ${file}`);
}
