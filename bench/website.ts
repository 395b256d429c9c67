/**
 * Website (issue 6): throughput of the catalog GETs and /health on a Plaza child process (embedded
 * storage) beside a bare Express hello-world measured in the same run with the same load
 * (autocannon, 32 connections, each route alternating with the baseline; target >= 80% of hello-world), and the intent classifier's latency
 * in process over varied English and Chinese prompts (target p99 <= 5 ms).
 * Plaza runs with MCP_REGISTRY_URL=off: a fresh instance otherwise pulls the public registry into
 * its database during the run, which is not what this measures.
 * Run: `node --import tsx bench/website.ts` (BENCH_DURATION_S per load phase, default 4).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { websiteContentSources } from '../config/content/index.ts';
import { buildIntentIndex, classifyIntent, loadWebsiteContent } from '../src/website/index.ts';
import { load, type LoadResult, median, percentile, saveResult, spawnServer } from './lib.ts';

const DURATION_S = Number(process.env['BENCH_DURATION_S'] ?? 2);
const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 5);
const CLASSIFICATIONS = Number(process.env['BENCH_CLASSIFICATIONS'] ?? 10_000);
const CONNECTIONS = 32;
const ROUTES = ['/health', '/api/products', '/api/scenarios', '/api/plans', '/api/manifesto'];

const PROMPTS = [
  'We need an audit trail of which agent touched our ERP, for SOC 2 compliance',
  'Our security team must revoke an agent in seconds and prove who accessed customer data',
  'Let shopping agents handle orders, refunds and inventory in our Shopify store',
  'I want to publish my CLI tool as a package with a signed manifest',
  'Automate our newsletter, SEO content and social media campaigns',
  'We run an online store and want 电商 agents to process 订单',
  'hello',
  'Can Plaza give every agent an identity and a receipt for each tool call across our 40 internal MCP servers, with SSO and per-team budgets?',
  '我们是一家银行，需要审计每个智能体的访问权限并满足合规要求',
  '我们的网店想让智能体处理订单、库存和售后退款',
  '我想把我的开源命令行工具打包发布，让智能体可以安装',
  '帮我们的营销团队自动化获客和小红书内容投放',
  '你好',
  '我们有很多内部系统，希望每一个智能体调用工具时都有身份和可验证的回执，并且能够随时撤销权限，满足审计和数据合规的要求。',
];

/** Times `n` classifications (prompts cycled, each made unique by a suffix) and returns p50/p99 in ms. */
function benchClassifier(n: number): Record<string, number> {
  const index = buildIntentIndex(
    loadWebsiteContent({ sources: websiteContentSources, baseUrl: 'https://plaza.example' }),
  );
  for (let i = 0; i < 500; i++) classifyIntent(index, PROMPTS[i % PROMPTS.length]!);
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const prompt = `${PROMPTS[i % PROMPTS.length]!} ${i % 7 === 0 ? `订单 ${i}` : `request ${i}`}`;
    const started = performance.now();
    classifyIntent(index, prompt);
    times.push(performance.now() - started);
  }
  return {
    classifications: n,
    classify_p50_ms: Number(percentile(times, 50).toFixed(4)),
    classify_p99_ms: Number(percentile(times, 99).toFixed(4)),
    classify_max_ms: Number(Math.max(...times).toFixed(3)),
    classify_target_p99_ms: 5,
  };
}

/** Runs the website benchmark and returns its figures. */
export async function benchWebsite(): Promise<Record<string, unknown>> {
  const classifier = benchClassifier(CLASSIFICATIONS);
  const dir = mkdtempSync(join(tmpdir(), 'plaza-bench-website-'));
  const hello = await spawnServer(
    process.execPath,
    ['bench/fixtures/hello-express.mjs'],
    { PORT: '18093' },
    'http://127.0.0.1:18093/health',
  );
  const plaza = await spawnServer(
    process.execPath,
    ['bin/plaza.mjs', 'serve'],
    { PLAZA_DATA_DIR: dir, PORT: '18094', HOST: '127.0.0.1', LOG_LEVEL: 'warn', MCP_REGISTRY_URL: 'off' },
    'http://127.0.0.1:18094/health',
  );
  try {
    const options = { connections: CONNECTIONS, durationS: DURATION_S };
    await load(`${hello.url}/health`, { connections: CONNECTIONS, durationS: 1 });
    for (const route of ROUTES) await load(`${plaza.url}${route}`, { connections: CONNECTIONS, durationS: 1 });
    // Each route alternates with the baseline (B R B R B R B): a route's ratio in a round is its
    // rate over the mean of the two baselines around it, and the route's figure is the median of
    // its rounds — so the drift of a shared, noisy machine hits both sides alike.
    const routes: Record<string, Record<string, number>> = {};
    const baselines: number[] = [];
    for (const route of ROUTES) {
      let previous = (await load(`${hello.url}/health`, options)).requestsPerSec;
      const rounds: { ratio: number; r: LoadResult }[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        const r = await load(`${plaza.url}${route}`, options);
        const next = (await load(`${hello.url}/health`, options)).requestsPerSec;
        rounds.push({ ratio: r.requestsPerSec / ((previous + next) / 2), r });
        baselines.push(previous);
        previous = next;
      }
      rounds.sort((a, b) => a.ratio - b.ratio);
      const mid = rounds[Math.floor(rounds.length / 2)]!;
      routes[route] = {
        rps: Math.round(mid.r.requestsPerSec),
        ratio: Number(mid.ratio.toFixed(3)),
        ratio_min: Number(rounds[0]!.ratio.toFixed(3)),
        ratio_max: Number(rounds.at(-1)!.ratio.toFixed(3)),
        p50_ms: mid.r.p50Ms,
        p99_ms: mid.r.p99Ms,
        errors: rounds.reduce((n, x) => n + x.r.errors + x.r.non2xx, 0),
      };
    }
    const ratios = Object.values(routes).map((r) => r['ratio']!);
    const figures = {
      connections: CONNECTIONS,
      duration_s: DURATION_S,
      rounds: ROUNDS,
      baseline_express_rps: Math.round(median(baselines)),
      routes,
      min_ratio: Number(Math.min(...ratios).toFixed(3)),
      target_ratio: 0.8,
      ...classifier,
    };
    saveResult('website', figures);
    return figures;
  } finally {
    await hello.stop();
    await plaza.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.main) console.log(JSON.stringify(await benchWebsite(), null, 2));
