/**
 * Pins the policy hook's contract with the gateway (gateway/call-pipeline.ts `Authorize`):
 * `tools/list` asks the rules only and never counts; `tools/call` counts only while a limit applies;
 * a refusal's code is `denied` or `rate_limited`, a rate limit's reason names the limit and its
 * retryAfterS the window's end; annotations missing from the question are looked up in the catalog
 * only when a rule needs them. Over the real memory counters and cached state, with a store in memory.
 */
import { describe, expect, it } from 'vitest';

import type { AuthorizeInput } from '../../gateway/index.ts';
import type { Clock } from '../../src/kernel/index.ts';
import { createLogger } from '../../src/log/index.ts';
import { authorizeWith } from '../../src/policy/authorize.ts';
import { createMemoryCounters, type QuotaCounters } from '../../src/policy/counters.ts';
import { PolicyDocumentSchema, type WindowLimits } from '../../src/policy/document.ts';
import { createPolicyState } from '../../src/policy/state.ts';
import type { PolicyStore } from '../../src/policy/store.ts';

const NOON = Date.UTC(2026, 10, 29, 12, 0, 30);

function setup(options: { policy?: unknown; declared?: WindowLimits; annotations?: Record<string, unknown> }) {
  const lookups: string[] = [];
  const store = {
    agent: async () => ({
      accountId: 'acc_1',
      policy: options.policy === undefined ? undefined : PolicyDocumentSchema.parse(options.policy),
      account: { default_policy: null, limits: {} },
    }),
    providerLimits: async () => options.declared,
    toolAnnotations: async (provider: string, tool: string) => {
      lookups.push(`${provider}/${tool}`);
      return options.annotations;
    },
  } as unknown as PolicyStore;
  const clock: Clock = { now: () => NOON };
  const memory = createMemoryCounters();
  let consumed = 0;
  const counters: QuotaCounters = { ...memory, consume: (slots, now) => (consumed++, memory.consume(slots, now)) };
  const authorize = authorizeWith({
    state: createPolicyState({ store, clock }),
    counters,
    keyPrefix: 'test:',
    clock,
    log: createLogger({ level: 'silent' }),
  });
  const ask = (method: string, tool = 'read', provider = 'crm') =>
    authorize({
      identity: {
        agentId: 'agt_1',
        accountId: 'acc_1',
        aginId: 'agin_1',
        agentPrincipal: 'p',
        displayName: 'd',
        ownerContext: 'c',
      },
      provider,
      method,
      tool,
    } as AuthorizeInput);
  return { ask, lookups, consumed: () => consumed };
}

describe('the policy hook', () => {
  it('answers tools/list by the rules alone, never counting', async () => {
    const s = setup({ policy: { rules: [{ effect: 'deny', provider: 'crm', tool: 'wipe' }], limits: { per_day: 1 } } });
    for (let i = 0; i < 5; i++) expect(await s.ask('tools/list')).toEqual({ allowed: true });
    expect(await s.ask('tools/list', 'wipe')).toMatchObject({ allowed: false, code: 'denied' });
    expect(s.consumed()).toBe(0);
    expect(await s.ask('tools/call')).toEqual({ allowed: true });
    expect(await s.ask('tools/call')).toEqual({
      allowed: false,
      code: 'rate_limited',
      reason: "rate limited: the agent's policy's limit of 1 calls per day (limits.per_day) is reached",
      retryAfterS: 12 * 3600 - 30,
    });
  });

  it('counts nothing for an agent no limit applies to', async () => {
    const s = setup({ policy: { rules: [{ effect: 'allow', provider: '*', tool: '*' }] } });
    for (let i = 0; i < 3; i++) expect((await s.ask('tools/call')).allowed).toBe(true);
    expect(s.consumed()).toBe(0);
  });

  it("names the provider's declared limit when it is the smaller one", async () => {
    const s = setup({ policy: { limits: { per_provider: { crm: { per_minute: 5 } } } }, declared: { per_minute: 1 } });
    expect((await s.ask('tools/call')).allowed).toBe(true);
    expect(await s.ask('tools/call')).toMatchObject({
      code: 'rate_limited',
      reason:
        "rate limited: provider crm's limit of 1 calls per minute per agent (its listing's agin_limits.per_minute) is reached",
      retryAfterS: 30,
    });
  });

  it('looks annotations up in the catalog only when a rule needs them', async () => {
    const plain = setup({ policy: { rules: [{ effect: 'deny', provider: 'crm', tool: 'x' }] } });
    await plain.ask('tools/call');
    expect(plain.lookups).toEqual([]);
    const s = setup({
      policy: { rules: [{ effect: 'deny', provider: '*', tool: '*', annotations: { destructiveHint: true } }] },
      annotations: { readOnlyHint: true },
    });
    expect((await s.ask('tools/call', 'list')).allowed).toBe(true);
    expect(s.lookups).toEqual(['crm/list']);
  });
});
