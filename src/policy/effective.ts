/**
 * The policy that applies to an agent: its own, else its account's default policy, else none
 * (every call allowed, today's behaviour), with the default effect resolved and the rules compiled.
 */
import type { AccountPolicy, PolicyDocument, WindowLimits } from './document.ts';
import { type CompiledRules, compileRules } from './rules.ts';
import type { AgentPolicyRow } from './store.ts';

/** The policy as applied to an agent's calls. */
export interface EffectivePolicy {
  /** The document applied, its `default` resolved (GET …/policy `effective`). */
  document: PolicyDocument & { default: 'allow' | 'deny' };
  /** Where it comes from. */
  source: 'agent' | 'account' | 'none';
  /** Its name in refusals. */
  who: string;
  rules: CompiledRules;
  /** The account-wide ceiling. */
  ceiling: WindowLimits;
}

/** `doc`'s default effect: its own, else deny when it allows something, else `fallback`. */
function defaultOf(doc: PolicyDocument, fallback: 'allow' | 'deny'): 'allow' | 'deny' {
  return doc.default ?? (doc.rules.some((r) => r.effect === 'allow') ? 'deny' : fallback);
}

function applied(
  doc: PolicyDocument,
  fallback: 'allow' | 'deny',
  source: EffectivePolicy['source'],
  who: string,
  ceiling: WindowLimits,
): EffectivePolicy {
  const resolved = { ...doc, default: defaultOf(doc, fallback) };
  return { document: resolved, source, who, rules: compileRules(doc, resolved.default, who), ceiling };
}

/** A stored value no version of the schema reads: refuse everything rather than guess. */
const UNREADABLE: PolicyDocument = { default: 'deny', rules: [] };

/** The effective policy of an agent from what the store holds. */
export function effectivePolicy(row: AgentPolicyRow): EffectivePolicy {
  const account: AccountPolicy = row.account === 'invalid' ? { default_policy: UNREADABLE, limits: {} } : row.account;
  const accountDefault = account.default_policy;
  const fallback = accountDefault ? defaultOf(accountDefault, 'allow') : 'allow';
  if (row.policy === 'invalid')
    return applied(
      UNREADABLE,
      'deny',
      'agent',
      "the agent's policy (stored in a form this version cannot read)",
      account.limits,
    );
  if (row.policy) return applied(row.policy, fallback, 'agent', "the agent's policy", account.limits);
  if (accountDefault)
    return applied(accountDefault, 'allow', 'account', "the account's default policy", account.limits);
  return applied({ rules: [] }, 'allow', 'none', 'no policy', account.limits);
}
