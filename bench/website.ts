/**
 * Website (issue 6): throughput of the catalog GETs and /health on a Plaza child process (embedded
 * storage) beside a bare Express hello-world measured in the same run with the same load
 * (autocannon, 32 connections; target >= 80% of hello-world), and the intent classifier's latency
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
import { load, type LoadResult, percentile, saveResult, spawnServer } from './lib.ts';

const DURATION_S = Number(process.env['BENCH_DURATION_S'] ?? 4);
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
  const index = buildIntentIndex(loadWebsiteContent({ sources: websiteContentSources, baseUrl: 'https://plaza.example' }));
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
  const hello = await spawnServer(process.execPath, ['bench/fixtures/hello-express.mjs'], { PORT: '18093' }, 'http://127.0.0.1:18093/health');
  const plaza = await spawnServer(process.execPath, ['bin/plaza.mjs', 'serve'], { PLAZA_DATA_DIR: dir, PORT: '18094', HOST: '127.0.0.1', LOG_LEVEL: 'warn', MCP_REGISTRY_URL: 'off' }, 'http://127.0.0.1:18094/health');
  try {
    const options = { connections: CONNECTIONS, durationS: DURATION_S };
    await load(`${hello.url}/health`, { connections: CONNECTIONS, durationS: 1 });
    for (const route of ROUTES) await load(`${plaza.url}${route}`, { connections: CONNECTIONS, durationS: 1 });
    // Baseline before and after the Plaza runs; the ratio uses their mean, so drift hits both.
    const before = await load(`${hello.url}/health`, options);
    const runs: [string, LoadResult][] = [];
    for (const route of ROUTES) runs.push([route, await load(`${plaza.url}${route}`, options)]);
    const after = await load(`${hello.url}/health`, options);
    const baseline = (before.requestsPerSec + after.requestsPerSec) / 2;
    const routes = Object.fromEntries(
      runs.map(([route, r]) => [
        route,
        { rps: Math.round(r.requestsPerSec), ratio: Number((r.requestsPerSec / baseline).toFixed(3)), p50_ms: r.p50Ms, p99_ms: r.p99Ms, errors: r.errors + r.non2xx },
      ]),
    );
    const ratios = runs.map(([, r]) => r.requestsPerSec / baseline);
    const figures = {
      connections: CONNECTIONS,
      duration_s: DURATION_S,
      baseline_express_rps: Math.round(baseline),
      baseline_before_after_rps: [Math.round(before.requestsPerSec), Math.round(after.requestsPerSec)],
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
