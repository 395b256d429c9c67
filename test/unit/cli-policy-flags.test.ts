/**
 * Pins what `plaza agents policy set`'s options mean: the policy document each one adds (the body
 * of PUT /api/agents/:id/policy), and a one-line usage error naming the option for one that
 * describes nothing.
 */
import { describe, expect, it } from 'vitest';

import { describesPolicy, PolicyFlagError, policyFromFlags } from '../../src/cli/policy-flags.ts';
import { policyText } from '../../src/cli/policy-text.ts';

describe('plaza agents policy set options', () => {
  it('turns --allow/--deny <provider>/<tool> into rules, splitting at the first slash', () => {
    expect(policyFromFlags({ allow: ['crm/read_*', 'files/dir/list'], deny: ['*/delete_*'], default: 'deny' })).toEqual(
      {
        default: 'deny',
        rules: [
          { effect: 'allow', provider: 'crm', tool: 'read_*' },
          { effect: 'allow', provider: 'files', tool: 'dir/list' },
          { effect: 'deny', provider: '*', tool: 'delete_*' },
        ],
      },
    );
  });

  it.each([
    ['destructiveHint', { effect: 'deny', provider: '*', tool: '*', annotations: { destructiveHint: true } }],
    ['readOnlyHint=false', { effect: 'deny', provider: '*', tool: '*', annotations: { readOnlyHint: false } }],
    ['crm/*:openWorldHint=true', { effect: 'deny', provider: 'crm', tool: '*', annotations: { openWorldHint: true } }],
  ])('turns --deny-annotation %s into an annotation rule', (value, rule) => {
    expect(policyFromFlags({ denyAnnotation: [value] }).rules).toEqual([rule]);
  });

  it('turns the limit options into limits, a provider limit with one side or both', () => {
    expect(
      policyFromFlags({ perMinute: '60', perDay: '100', providerLimit: ['crm:10/50', 'files:5/', 'mail:/20'] }),
    ).toEqual({
      rules: [],
      limits: {
        per_minute: 60,
        per_day: 100,
        per_provider: { crm: { per_minute: 10, per_day: 50 }, files: { per_minute: 5 }, mail: { per_day: 20 } },
      },
    });
  });

  it.each([
    [{ allow: ['crm'] }, /--allow crm: write <provider>\/<tool>/],
    [{ deny: ['/x'] }, /--deny \/x: write <provider>\/<tool>/],
    [{ denyAnnotation: ['destructive hint'] }, /--deny-annotation destructive hint: write an annotation name/],
    [{ default: 'maybe' }, /--default maybe: write allow or deny/],
    [{ perDay: '0' }, /--per-day: 0 is not a whole number of calls from 1/],
    [{ perMinute: '1.5' }, /--per-minute: 1\.5 is not a whole number/],
    [{ providerLimit: ['crm:/'] }, /--provider-limit crm:\/: write <provider>:<per minute>\/<per day>/],
    [{ providerLimit: ['crm=10'] }, /--provider-limit crm=10: write/],
  ])('refuses %j in one line naming the option', (flags, message) => {
    expect(() => policyFromFlags(flags)).toThrow(PolicyFlagError);
    expect(() => policyFromFlags(flags)).toThrow(message);
  });

  it('tells options that describe a policy from none at all', () => {
    expect(describesPolicy({})).toBe(false);
    expect(describesPolicy({ allow: [] })).toBe(false);
    expect(describesPolicy({ perDay: '5' })).toBe(true);
  });
});

describe('plaza agents policy show text', () => {
  it('shows the own policy, the applied one and each count against its limit', () => {
    const text = policyText(
      { id: 'agt_x', display_name: 'Support bot', agin_id: 'agin_1' },
      {
        policy: {
          rules: [{ effect: 'allow', provider: 'crm', tool: 'read_*' }],
          limits: { per_day: 100 },
        },
        effective: {
          default: 'deny',
          rules: [{ effect: 'allow', provider: 'crm', tool: 'read_*' }],
          limits: { per_day: 100 },
        },
        usage: {
          minute: { used: 3, limit: null, resets_at: '2026-11-29T07:01:00Z' },
          day: { used: 42, limit: 100, resets_at: '2026-11-30T00:00:00Z' },
          per_provider: { crm: { minute: { used: 3, limit: 10 }, day: { used: 42, limit: null } } },
        },
      },
    );
    expect(text).toContain('Agent Support bot (agt_x), AGIN agin_1');
    expect(text).toMatch(/Own policy:\n {2}default: \(not set/);
    expect(text).toMatch(/allow {2}crm\/read_\*/);
    expect(text).toContain('today: 42 / 100, 58 left (resets 2026-11-30T00:00:00Z)');
    expect(text).toContain('this minute: 3 calls, no limit (resets 2026-11-29T07:01:00Z)');
    expect(text).toContain('crm: minute: 3 / 10, 7 left; day: 42 calls, no limit');
  });

  it('says when the agent has no policy of its own', () => {
    expect(policyText({ id: 'agt_x' }, { policy: null, effective: { rules: [] } })).toContain(
      'Own policy: none (the account default applies)',
    );
  });
});
