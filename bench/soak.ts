/**
 * Soak (issue 10): mixed traffic against one `plaza serve` (embedded storage) for BENCH_SOAK_S
 * seconds (default 600) and the server's resident memory over time; target: RSS growth < 10% from
 * the end of the first minute (warm) to the end. Traffic, 8 workers back to back: catalog GETs in
 * both locales, /health, tool search, intent recommendations, leads (new e-mails, so rows grow),
 * guest tokens, embedded-assistant chat completions (streamed and not), source list reads, pages.
 * Limits are raised so the traffic is served, not refused. RSS is read from /proc/<pid>/status.
 * Run: `node --import tsx bench/soak.ts`.
 */
import { readFileSync } from 'node:fs';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { loadLoop, saveResult, spawnServer } from './lib.ts';

const SOAK_S = Number(process.env['BENCH_SOAK_S'] ?? 600);
const WARM_S = Math.min(60, Math.floor(SOAK_S / 5));
const PORT = 18098;

function rssMb(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((l) => l.startsWith('VmRSS:'));
  return Math.round(Number(line?.split(/\s+/)[1] ?? 0) / 1024);
}

/** Runs the soak and returns its figures. */
export async function benchSoak(): Promise<Record<string, unknown>> {
  const dir = mkdtempSync(join(tmpdir(), 'plaza-bench-soak-'));
  const unlimited = '1000000';
  const plaza = await spawnServer(
    process.execPath,
    ['bin/plaza.mjs', 'serve'],
    {
      PLAZA_DATA_DIR: dir,
      PORT: String(PORT),
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
    },
    `http://127.0.0.1:${PORT}/health`,
  );
  const pid = plaza.child.pid!;
  const base = plaza.url;
  try {
    const token = ((await (await fetch(`${base}/api/auth/guest-token`, { method: 'POST' })).json()) as { data: { token: string } }).data.token;
    const json = (body: unknown) => ({ method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const chat = (stream: boolean) => ({
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ model: 'plaza-assistant', stream, messages: [{ role: 'user', content: 'Which plan fits a team of ten agents?' }] }),
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
    const samples: { t: number; rss_mb: number }[] = [];
    const started = performance.now();
    const sampler = setInterval(() => samples.push({ t: Math.round((performance.now() - started) / 1000), rss_mb: rssMb(pid) }), 5_000);
    let failures = 0;
    const result = await loadLoop({
      connections: 8,
      durationS: SOAK_S,
      send: async () => {
        const i = n++;
        // Every 25th request is a new lead: the database grows as it would.
        const [path, init] = i % 25 === 0 ? ['/api/leads', json({ email: `soak-${i}@example.com`, scenario: 'developer' })] : requests[i % requests.length]!;
        const res = await fetch(`${base}${path}`, init);
        await res.arrayBuffer();
        if (res.status >= 400) {
          failures++;
          if (process.env['BENCH_VERBOSE']) console.log(res.status, path);
        }
        return res.status < 400;
      },
    });
    clearInterval(sampler);
    const warm = samples.filter((s) => s.t <= WARM_S).at(-1)?.rss_mb ?? samples[0]?.rss_mb ?? 0;
    const last = samples.at(-1)?.rss_mb ?? 0;
    const peak = Math.max(...samples.map((s) => s.rss_mb));
    const figures = {
      soak_s: SOAK_S,
      requests: result.requests,
      requests_per_s: Math.round(result.requestsPerSec),
      failures,
      p99_ms: result.p99Ms,
      rss_warm_mb: warm,
      rss_end_mb: last,
      rss_peak_mb: peak,
      rss_growth_pct: Number((((last - warm) / warm) * 100).toFixed(1)),
      target_growth_pct: 10,
      rss_by_minute_mb: samples.filter((s) => s.t % 60 === 0).map((s) => s.rss_mb),
    };
    saveResult('soak', figures);
    return figures;
  } finally {
    await plaza.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.main) console.log(JSON.stringify(await benchSoak(), null, 2));
