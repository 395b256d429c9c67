/**
 * Pins the policy's evaluation: globs (`*`, `?`, literal) matched without backtracking (patterns a
 * backtracking regex takes exponential time on, 100 of them on one agent, answer at once), rules
 * deny-first, the default effect resolved as the contract says, annotation rules with MCP's
 * defaults, and malformed documents refused naming the rule index and field.
 */
import { describe, expect, it } from 'vitest';

import { ValidationError } from '../../src/kernel/index.ts';
import { effectivePolicy } from '../../src/policy/effective.ts';
import { compileGlob, compileRules, parsePolicyInput, PolicyDocumentSchema } from '../../src/policy/index.ts';

const parse = (doc: unknown) => parsePolicyInput(PolicyDocumentSchema, doc, 'policy');

describe('compileGlob', () => {
  it.each([
    ['*', 'anything', true],
    ['*', '', true],
    ['crm', 'crm', true],
    ['crm', 'crm2', false],
    ['cr*', 'crm', true],
    ['cr*', 'cr', true],
    ['cr*', 'c', false],
    ['read_*', 'read_contacts', true],
    ['read_*', 'write_contacts', false],
    ['*_contacts', 'read_contacts', true],
    ['r?ad', 'read', true],
    ['r?ad', 'rad', false],
    ['a*b*c', 'abc', true],
    ['a*b*c', 'aXbYc', true],
    ['a*b*c', 'acb', false],
    ['a*a', 'a', false],
    ['a*?b', 'ab', false],
    ['a*?b', 'axb', true],
    ['*x?z*', 'abxyzcd', true],
    ['**', 'x', true],
    ['a.b', 'aXb', false],
    ['[a]', '[a]', true],
    ['(a+)+', '(a+)+', true],
  ])('%s against %s: %s', (pattern, name, expected) => {
    expect(compileGlob(pattern)(name)).toBe(expected);
  });

  it('matches a pattern with many stars against a long name that almost matches, at once', () => {
    // As a regex (a.*a.*…b) this backtracks through C(10000, 30) ways before failing.
    const pattern = `${'a*'.repeat(30)}b`;
    expect(compileGlob(pattern)('a'.repeat(10_000))).toBe(false);
    expect(compileGlob(pattern)(`${'a'.repeat(10_000)}b`)).toBe(true);
    expect(compileGlob(`${'*?'.repeat(100)}!`)('x'.repeat(10_000))).toBe(false);
  });
});

describe('compileRules', () => {
  const rules = (doc: unknown, fallback: 'allow' | 'deny' = 'allow') => {
    const policy = parse(doc);
    return compileRules(policy, policy.default ?? fallback, "the agent's policy");
  };

  it('refuses when any deny matches, even after an allow, and names the first deny', () => {
    const r = rules({
      rules: [
        { effect: 'allow', provider: 'crm', tool: '*' },
        { effect: 'deny', provider: 'crm', tool: 'delete_*' },
        { effect: 'deny', provider: '*', tool: 'delete_contact' },
      ],
    });
    expect(r.decide('crm', 'read_contacts')).toEqual({ allowed: true });
    expect(r.decide('crm', 'delete_contact')).toEqual({
      allowed: false,
      reason: "denied by the agent's policy: rules[1] (deny crm/delete_*)",
    });
  });

  it('answers by the default when no rule matches', () => {
    expect(rules({ default: 'deny', rules: [] }).decide('crm', 'x')).toMatchObject({
      allowed: false,
      reason: expect.stringContaining('no rule allows crm/x (default deny)'),
    });
    expect(rules({ rules: [{ effect: 'deny', provider: 'crm', tool: '*' }] }).decide('mail', 'send')).toEqual({
      allowed: true,
    });
  });

  it('matches annotation rules on the values, with MCP defaults for a tool that says nothing', () => {
    const r = rules({ rules: [{ effect: 'deny', provider: '*', tool: '*', annotations: { destructiveHint: true } }] });
    expect(r.needsAnnotations).toBe(true);
    expect(r.decide('crm', 'read', () => ({ readOnlyHint: true })).allowed).toBe(true);
    expect(r.decide('crm', 'wipe', () => ({ destructiveHint: true })).allowed).toBe(false);
    expect(r.decide('crm', 'edit', () => ({ destructiveHint: false })).allowed).toBe(true);
    // Says nothing: destructive by MCP's default.
    expect(r.decide('crm', 'unknown', () => undefined).allowed).toBe(false);
  });

  it('lets an annotation allow open what a default deny closes', () => {
    const r = rules({
      default: 'deny',
      rules: [{ effect: 'allow', provider: 'crm', tool: '*', annotations: { readOnlyHint: true } }],
    });
    expect(r.decide('crm', 'list', () => ({ readOnlyHint: true })).allowed).toBe(true);
    expect(r.decide('crm', 'write', () => ({})).allowed).toBe(false);
  });

  it('decides with 100 backtracking-hostile rules on the agent', () => {
    const many = Array.from({ length: 100 }, (_, i) => ({
      effect: 'deny' as const,
      provider: `${'*a'.repeat(20)}*${i}`,
      tool: `${'a*'.repeat(20)}!`,
    }));
    const r = rules({ rules: [...many, { effect: 'allow', provider: '*', tool: '*' }] });
    expect(r.decide('a'.repeat(250), 'a'.repeat(300))).toEqual({ allowed: true });
  });
});

describe('effectivePolicy', () => {
  const row = (policy: unknown, defaultPolicy: unknown = null) => ({
    accountId: 'acc_1',
    policy: policy === undefined ? undefined : parse(policy),
    account: { default_policy: defaultPolicy === null ? null : parse(defaultPolicy), limits: {} },
  });

  it('allows everything without a policy (today’s behaviour)', () => {
    const e = effectivePolicy(row(undefined));
    expect(e.source).toBe('none');
    expect(e.document.default).toBe('allow');
  });

  it('denies by default once a policy allows something', () => {
    const e = effectivePolicy(row({ rules: [{ effect: 'allow', provider: 'crm', tool: 'read_*' }] }));
    expect(e.document.default).toBe('deny');
    expect(e.rules.decide('crm', 'write').allowed).toBe(false);
  });

  it('takes the account default’s default for a deny-only policy, and the account default without one', () => {
    const e = effectivePolicy(row({ rules: [{ effect: 'deny', provider: 'x', tool: '*' }] }, { default: 'deny' }));
    expect(e.document.default).toBe('deny');
    const d = effectivePolicy(row(undefined, { rules: [{ effect: 'allow', provider: 'crm', tool: '*' }] }));
    expect(d.source).toBe('account');
    expect(d.rules.decide('mail', 'send')).toMatchObject({
      reason: expect.stringContaining("the account's default policy"),
    });
  });

  it('refuses everything when the stored policy cannot be read', () => {
    const e = effectivePolicy({ accountId: 'a', policy: 'invalid', account: { default_policy: null, limits: {} } });
    expect(e.rules.decide('crm', 'read').allowed).toBe(false);
  });
});

describe('parsePolicyInput', () => {
  it.each([
    [
      {
        rules: [
          { effect: 'allow', provider: 'crm', tool: 'a' },
          { effect: 'maybe', provider: 'x', tool: 'y' },
        ],
      },
      'rule 1: rules[1].effect',
    ],
    [{ rules: [{ effect: 'allow', provider: '', tool: 'a' }] }, 'rule 0: rules[0].provider: must not be empty'],
    [
      { rules: [{ effect: 'allow', provider: 'a', tool: 'x'.repeat(301) }] },
      'rule 0: rules[0].tool: must be at most 300',
    ],
    [{ rules: [{ effect: 'allow', provider: 'a', tool: 'b', extra: 1 }] }, 'rule 0: rules[0]: unknown field(s) extra'],
    [{ limits: { per_minute: 0 } }, 'limits.per_minute: must be at least 1'],
    [{ limits: { per_day: 1.5 } }, 'limits.per_day: must be a whole number'],
    [{ limits: { per_provider: { 'Not A Slug': { per_day: 1 } } } }, 'limits.per_provider.Not A Slug'],
    [
      { rules: Array.from({ length: 201 }, () => ({ effect: 'allow', provider: 'a', tool: 'b' })) },
      'rules: at most 200 rules',
    ],
  ])('refuses a malformed document naming the field (%#)', (doc, said) => {
    expect(() => parse(doc)).toThrow(ValidationError);
    expect(() => parse(doc)).toThrow(said);
  });

  it('refuses a body that is not an object', () => {
    expect(() => parse([])).toThrow('must be a JSON object');
  });
});
