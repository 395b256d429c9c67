/**
 * The policy hook alone (issue 35), in this process: CPU µs per `tools/call` check for an agent
 * without a policy, with the bench's 100-rule policy, and with limits counted in memory or, when
 * BENCH_REDIS_URL is set, through Redis (one EVALSHA per call; wall µs too). The same hook the
 * gateway asks, over an in-memory store (the database is read once per 2 s per agent and is not
 * what is measured). POLICY_CONCURRENCY (32) checks are in flight at once. Run: `node --import tsx bench/policy-check.ts` (POLICY_CALLS, default 100000).
 */
import { Redis } from 'ioredis';

import { systemClock } from '../src/kernel/index.ts';
import { createLogger } from '../src/log/index.ts';
import { authorizeWith } from '../src/policy/authorize.ts';
import { createMemoryCounters, createRedisCounters, type QuotaCounters } from '../src/policy/counters.ts';
import { PolicyDocumentSchema } from '../src/policy/document.ts';
import { createPolicyState } from '../src/policy/state.ts';
import type { PolicyStore } from '../src/policy/store.ts';

const CALLS = Number(process.env['POLICY_CALLS'] ?? 100_000);
const CONCURRENCY = Number(process.env['POLICY_CONCURRENCY'] ?? 32);
const log = createLogger({ level: 'warn', destination: process.stderr });

function rules(): unknown[] {
  return [
    ...Array.from({ length: 50 }, (_, i) => ({ effect: 'deny', provider: `other-${i}*`, tool: '*' })),
    ...Array.from({ length: 49 }, (_, i) => ({ effect: 'deny', provider: '*', tool: `delete_${i}_*` })),
    { effect: 'allow', provider: '*', tool: '*' },
  ];
}

function store(policy: unknown): PolicyStore {
  const parsed = policy === undefined ? undefined : PolicyDocumentSchema.parse(policy);
  return {
    agent: async () => ({ accountId: 'acc_bench', policy: parsed, account: { default_policy: null, limits: {} } }),
    providerLimits: async () => undefined,
    toolAnnotations: async () => undefined,
  } as unknown as PolicyStore;
}

async function measure(name: string, policy: unknown, counters: QuotaCounters): Promise<void> {
  const authorize = authorizeWith({
    state: createPolicyState({ store: store(policy), clock: systemClock }),
    counters,
    keyPrefix: `bench-policy-${process.pid}:`,
    clock: systemClock,
    log,
  });
  const input = {
    identity: {
      agentId: 'agt_bench',
      accountId: 'acc_bench',
      aginId: 'agin_bench',
      agentPrincipal: 'p',
      displayName: 'b',
      ownerContext: 'c',
    },
    provider: 'everything',
    method: 'tools/call',
    tool: 'echo',
  };
  for (let i = 0; i < 1000; i++) await authorize(input);
  const cpu = process.cpuUsage();
  const started = process.hrtime.bigint();
  // CONCURRENCY checks in flight at once, as a loaded gateway asks them.
  const lane = async () => {
    for (let i = 0; i < CALLS / CONCURRENCY; i++) {
      const answer = await authorize(input);
      if (!answer.allowed) throw new Error(`refused: ${answer.reason}`);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, lane));
  const wallUs = Number(process.hrtime.bigint() - started) / 1000 / CALLS;
  const used = process.cpuUsage(cpu);
  const cpuUs = (used.user + used.system) / CALLS;
  console.log(`${name.padEnd(44)} cpu ${cpuUs.toFixed(2)} µs/call, wall ${wallUs.toFixed(2)} µs/call`);
}

const limits = { per_minute: 1_000_000_000, per_day: 1_000_000_000 };
await measure('no policy', undefined, createMemoryCounters());
await measure('100 rules', { rules: rules() }, createMemoryCounters());
await measure('100 rules + limits, counted in memory', { rules: rules(), limits }, createMemoryCounters());
const redisUrl = process.env['BENCH_REDIS_URL'];
if (redisUrl) {
  const redis = new Redis(redisUrl);
  await measure('100 rules + limits, counted in Redis', { rules: rules(), limits }, createRedisCounters(redis, log));
  await redis.quit();
  const piped = new Redis(redisUrl, { enableAutoPipelining: true });
  await measure('… through an auto-pipelining client', { rules: rules(), limits }, createRedisCounters(piped, log));
  await piped.quit();
}
