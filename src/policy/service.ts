/**
 * The policy API's service: an account's agents' policies and its default policy and ceiling, with
 * usage against the limits. Every change is effective on this instance at once and on the others
 * within the state's TTL (see state.ts).
 */
import { type Clock, NotFoundError } from '../kernel/index.ts';
import type { QuotaCounters } from './counters.ts';
import {
  type AccountPolicy,
  AccountPolicySchema,
  parsePolicyInput,
  type PolicyDocument,
  PolicyDocumentSchema,
} from './document.ts';
import { usageKeys } from './quotas.ts';
import type { PolicyState } from './state.ts';
import type { PolicyStore } from './store.ts';

/** Calls counted in one window against its limit. */
export interface WindowUsage {
  used: number;
  limit: number | null;
  resets_at: string;
}

/** Usage of an agent against its limits (GET …/policy `usage`). */
export interface AgentUsage {
  minute: WindowUsage;
  day: WindowUsage;
  per_provider: Record<string, { minute: WindowUsage; day: WindowUsage }>;
}

/** The answer of GET/PUT /api/agents/:id/policy. */
export interface AgentPolicyView {
  policy: PolicyDocument | null;
  effective: PolicyDocument & { default: 'allow' | 'deny' };
  usage: AgentUsage;
}

/** The answer of GET/PUT /api/account/agent-policy (plus the account's usage against its ceiling). */
export interface AccountPolicyView extends AccountPolicy {
  usage: { minute: WindowUsage; day: WindowUsage };
}

/** Agent policies and account settings, as the API uses them. */
export interface PolicyService {
  agentPolicy(accountId: string, agentId: string): Promise<AgentPolicyView>;
  setAgentPolicy(accountId: string, agentId: string, body: unknown): Promise<AgentPolicyView>;
  removeAgentPolicy(accountId: string, agentId: string): Promise<AgentPolicyView>;
  accountPolicy(accountId: string): Promise<AccountPolicyView>;
  setAccountPolicy(accountId: string, body: unknown): Promise<AccountPolicyView>;
}

/** Creates the service. */
export function createPolicyService(options: {
  store: PolicyStore;
  state: PolicyState;
  counters: QuotaCounters;
  keyPrefix: string;
  clock: Clock;
}): PolicyService {
  const { store, state, counters, clock } = options;
  const prefix = `${options.keyPrefix}quota:`;
  const window = (used: number, limit: number | undefined, resetAt: number): WindowUsage => ({
    used,
    limit: limit ?? null,
    resets_at: new Date(resetAt).toISOString(),
  });

  async function view(accountId: string, agentId: string): Promise<AgentPolicyView> {
    await store.assertOwnAgent(accountId, agentId);
    const row = await store.agent(agentId);
    const effective = await state.agent(agentId);
    // Removed between the two reads.
    if (!row || !effective) throw new NotFoundError(`No agent ${agentId.slice(0, 64)} in this account.`);
    const limits = effective.document.limits;
    const agent = { agentId, accountId };
    const now = clock.now();
    const own = usageKeys(prefix, agent, now);
    const providers = Object.keys(limits?.per_provider ?? {});
    const keys = providers.map((provider) => usageKeys(prefix, agent, now, { provider }));
    const counts = await counters.read([own.minute, own.day, ...keys.flatMap((k) => [k.minute, k.day])], now);
    const per_provider: AgentUsage['per_provider'] = {};
    providers.forEach((provider, i) => {
      const k = keys[i]!;
      const p = limits?.per_provider?.[provider];
      per_provider[provider] = {
        minute: window(counts[2 + 2 * i]!, p?.per_minute, k.minuteReset),
        day: window(counts[3 + 2 * i]!, p?.per_day, k.dayReset),
      };
    });
    return {
      policy: row.policy === undefined || row.policy === 'invalid' ? null : row.policy,
      effective: effective.document,
      usage: {
        minute: window(counts[0]!, limits?.per_minute, own.minuteReset),
        day: window(counts[1]!, limits?.per_day, own.dayReset),
        per_provider,
      },
    };
  }

  async function accountView(accountId: string): Promise<AccountPolicyView> {
    const policy = await store.accountPolicy(accountId);
    const now = clock.now();
    const k = usageKeys(prefix, { agentId: '', accountId }, now, { account: true });
    const [minute, day] = await counters.read([k.minute, k.day], now);
    return {
      ...policy,
      usage: {
        minute: window(minute!, policy.limits.per_minute, k.minuteReset),
        day: window(day!, policy.limits.per_day, k.dayReset),
      },
    };
  }

  return {
    agentPolicy: view,
    async setAgentPolicy(accountId, agentId, body) {
      const policy = parsePolicyInput(PolicyDocumentSchema, body, 'policy');
      await store.setAgentPolicy(accountId, agentId, policy);
      state.forgetAgent(agentId);
      return view(accountId, agentId);
    },
    async removeAgentPolicy(accountId, agentId) {
      await store.setAgentPolicy(accountId, agentId, null);
      state.forgetAgent(agentId);
      return view(accountId, agentId);
    },
    accountPolicy: accountView,
    async setAccountPolicy(accountId, body) {
      const policy = parsePolicyInput(AccountPolicySchema, body, 'account agent policy');
      await store.setAccountPolicy(accountId, policy);
      state.forgetAll();
      return accountView(accountId);
    },
  };
}
