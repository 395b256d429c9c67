/**
 * Which counters a call counts in, with which limits, and how a refusal names the limit reached:
 * per agent (minute, day), per agent × provider (the agent's own `per_provider` limits and the
 * provider's declared `agin_limits`, on one count), and the account-wide ceiling. Windows are UTC
 * minutes and days, the same on every instance, so a key names one window everywhere.
 */
import type { PolicyDocument, WindowLimits } from './document.ts';

/** The limits that apply to one agent's calls to one provider. */
export interface CallLimits {
  /** The effective policy's limits, and the policy's name in refusals. */
  agent: PolicyDocument['limits'];
  who: string;
  /** The account-wide ceiling. */
  account: WindowLimits;
  /** What the provider's listing declares per AGIN. */
  provider: WindowLimits | undefined;
}

/** The counters of one call and the words for each, in the order they are checked. */
export interface QuotaPlan {
  slots: { key: string; limit: number; resetAt: number }[];
  labels: string[];
}

const MINUTE = 60_000;
const DAY = 86_400_000;

/** The window of `now` of length `ms`: its number and its end. */
function windowOf(now: number, ms: number): { n: number; resetAt: number } {
  const n = Math.floor(now / ms);
  return { n, resetAt: (n + 1) * ms };
}

/**
 * The Redis hash tag of an account's counters: every key of one call has it, so one script may
 * touch them all on a Redis Cluster too. Agents without an account (Plaza's own) have their own.
 */
function tag(agentId: string, accountId: string | null): string {
  return accountId === null ? `{agent:${agentId}}` : `{${accountId}}`;
}

/** The keys of an agent's counters (minute, day) and of its counters per provider, for usage. */
export function usageKeys(
  prefix: string,
  agent: { agentId: string; accountId: string | null },
  now: number,
  scope: { provider?: string; account?: boolean } = {},
): { minute: string; day: string; minuteReset: number; dayReset: number } {
  const m = windowOf(now, MINUTE);
  const d = windowOf(now, DAY);
  const base = `${prefix}${tag(agent.agentId, agent.accountId)}:`;
  const who = scope.account
    ? 'acct'
    : scope.provider === undefined
      ? `a:${agent.agentId}`
      : `ap:${agent.agentId}:${scope.provider}`;
  return { minute: `${base}${who}:m${m.n}`, day: `${base}${who}:d${d.n}`, minuteReset: m.resetAt, dayReset: d.resetAt };
}

const smaller = (a: number | undefined, b: number | undefined) =>
  a === undefined ? b : b === undefined ? a : Math.min(a, b);

/**
 * The counters a call of `agent` to `provider` counts in, or undefined when no limit applies to it
 * (then nothing is counted: no Redis round trip for agents without limits). A per-provider count is
 * kept only for a provider with a limit, so a caller naming made-up providers creates no keys.
 */
export function quotaPlan(
  prefix: string,
  agent: { agentId: string; accountId: string | null },
  provider: string,
  limits: CallLimits,
  now: number,
): QuotaPlan | undefined {
  const own = limits.agent;
  const perProvider = own?.per_provider?.[provider];
  const declared = limits.provider;
  const ceiling = agent.accountId === null ? {} : limits.account;
  const anyLimit = (l: WindowLimits | undefined) => l?.per_minute !== undefined || l?.per_day !== undefined;
  const providerLimited = anyLimit(perProvider) || anyLimit(declared);
  if (!anyLimit(own) && !providerLimited && !anyLimit(ceiling)) return undefined;

  const plan: QuotaPlan = { slots: [], labels: [] };
  const add = (key: string, limit: number | undefined, resetAt: number, label: string) => {
    plan.slots.push({ key, limit: limit ?? 0, resetAt });
    plan.labels.push(label);
  };
  const a = usageKeys(prefix, agent, now);
  add(
    a.minute,
    own?.per_minute,
    a.minuteReset,
    `${limits.who}'s limit of ${own?.per_minute} calls per minute (limits.per_minute)`,
  );
  add(a.day, own?.per_day, a.dayReset, `${limits.who}'s limit of ${own?.per_day} calls per day (limits.per_day)`);
  if (providerLimited) {
    const p = usageKeys(prefix, agent, now, { provider });
    for (const [window, key, resetAt] of [
      ['minute', p.minute, p.minuteReset],
      ['day', p.day, p.dayReset],
    ] as const) {
      const field = window === 'minute' ? 'per_minute' : 'per_day';
      const ownLimit = perProvider?.[field];
      const declaredLimit = declared?.[field];
      const limit = smaller(ownLimit, declaredLimit);
      const label =
        limit !== undefined && limit === declaredLimit
          ? `provider ${provider}'s limit of ${limit} calls per ${window} per agent (its listing's agin_limits.${field})`
          : `${limits.who}'s limit of ${limit} calls per ${window} to ${provider} (limits.per_provider.${provider}.${field})`;
      add(key, limit, resetAt, label);
    }
  }
  if (anyLimit(ceiling)) {
    const c = usageKeys(prefix, agent, now, { account: true });
    add(
      c.minute,
      ceiling.per_minute,
      c.minuteReset,
      `the account's ceiling of ${ceiling.per_minute} calls per minute for all its agents (account limits.per_minute)`,
    );
    add(
      c.day,
      ceiling.per_day,
      c.dayReset,
      `the account's ceiling of ${ceiling.per_day} calls per day for all its agents (account limits.per_day)`,
    );
  }
  return plan;
}
