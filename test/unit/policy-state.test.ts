/**
 * Pins the instance's policy cache (src/policy/state.ts): a policy read is kept for its TTL and read
 * again after it (so a change made elsewhere applies within it), a re-read of the same document
 * keeps the compiled rules, a change here applies at once, and a failed re-read keeps the policy
 * last seen (a first read that fails reaches the caller).
 */
import { describe, expect, it } from 'vitest';

import { PolicyDocumentSchema } from '../../src/policy/document.ts';
import { createPolicyState } from '../../src/policy/state.ts';
import type { PolicyStore } from '../../src/policy/store.ts';

function setup() {
  let now = 1_000_000;
  let policy: unknown = { rules: [{ effect: 'deny', provider: 'crm', tool: '*' }] };
  let failing = false;
  let reads = 0;
  const store = {
    agent: async () => {
      reads++;
      if (failing) throw new Error('database unreachable');
      return {
        accountId: 'acc',
        policy: PolicyDocumentSchema.parse(policy),
        account: { default_policy: null, limits: {} },
      };
    },
  } as unknown as PolicyStore;
  const state = createPolicyState({ store, clock: { now: () => now }, ttlMs: 2_000 });
  return {
    state,
    advance: (ms: number) => (now += ms),
    set: (p: unknown) => (policy = p),
    fail: (f: boolean) => (failing = f),
    reads: () => reads,
  };
}

describe('the policy state of an instance', () => {
  it('keeps a policy for its TTL, then reads it again, keeping the compiled rules when nothing changed', async () => {
    const s = setup();
    const first = await s.state.agent('agt');
    expect(await s.state.agent('agt')).toBe(first);
    expect(s.reads()).toBe(1);
    s.advance(2_001);
    expect(await s.state.agent('agt')).toBe(first);
    expect(s.reads()).toBe(2);
    s.set({ rules: [] });
    s.advance(2_001);
    const changed = await s.state.agent('agt');
    expect(changed).not.toBe(first);
    expect(changed!.rules.decide('crm', 'x').allowed).toBe(true);
  });

  it('applies a change made on this instance at once', async () => {
    const s = setup();
    expect((await s.state.agent('agt'))!.rules.decide('crm', 'x').allowed).toBe(false);
    s.set({ rules: [] });
    s.state.forgetAgent('agt');
    expect((await s.state.agent('agt'))!.rules.decide('crm', 'x').allowed).toBe(true);
  });

  it('keeps the policy last seen while a re-read fails, and throws when it never read one', async () => {
    const s = setup();
    const seen = await s.state.agent('agt');
    s.fail(true);
    s.advance(2_001);
    expect(await s.state.agent('agt')).toBe(seen);
    await expect(Promise.resolve(s.state.agent('other'))).rejects.toThrow('database unreachable');
  });
});
