/** Where policies live: the agent's row, the account's row, and the provider's listing (Prisma). */
import type { PrismaClient } from '../db/index.ts';
import { NotFoundError } from '../kernel/index.ts';
import {
  type AccountPolicy,
  AccountPolicySchema,
  AginLimitsSchema,
  type PolicyDocument,
  storedDocument,
  type WindowLimits,
} from './document.ts';

/** What the gateway needs to know of an agent to decide on its calls. */
export interface AgentPolicyRow {
  accountId: string | null;
  /** The agent's own policy; undefined: none. `invalid`: a stored value this version cannot read. */
  policy: PolicyDocument | 'invalid' | undefined;
  account: AccountPolicy | 'invalid';
}

/** Reads and writes policies; returns domain types, never Prisma rows. */
export interface PolicyStore {
  /** The agent's policy and its account's settings; undefined when the agent does not exist. */
  agent(agentId: string): Promise<AgentPolicyRow | undefined>;
  /** The per-AGIN limits the listing of `provider` declares; undefined when none. */
  providerLimits(provider: string): Promise<WindowLimits | undefined>;
  /** The annotations the catalog holds for `provider`'s tool `tool` (from its last probe). */
  toolAnnotations(provider: string, tool: string): Promise<Readonly<Record<string, unknown>> | undefined>;
  /** Sets (or with null removes) the policy of the account's agent; NotFoundError for another account's. */
  setAgentPolicy(accountId: string, agentId: string, policy: PolicyDocument | null): Promise<void>;
  accountPolicy(accountId: string): Promise<AccountPolicy>;
  setAccountPolicy(accountId: string, policy: AccountPolicy): Promise<void>;
  /** Whether `agentId` is an agent of `accountId` (404 otherwise, as `/api/agents/:id` does). */
  assertOwnAgent(accountId: string, agentId: string): Promise<void>;
}

const EMPTY_ACCOUNT: AccountPolicy = { default_policy: null, limits: {} };

function accountOf(value: unknown): AccountPolicy | 'invalid' {
  if (value === null || value === undefined) return EMPTY_ACCOUNT;
  const parsed = AccountPolicySchema.safeParse(value);
  return parsed.success ? parsed.data : 'invalid';
}

function noAgent(agentId: string): NotFoundError {
  return new NotFoundError(`No agent ${agentId.slice(0, 64)} in this account.`);
}

/** Creates the policy store over Prisma. */
export function createPolicyStore(prisma: PrismaClient): PolicyStore {
  return {
    async agent(agentId) {
      const row = await prisma.agent.findUnique({
        where: { id: agentId },
        select: { accountId: true, policy: true, account: { select: { agentPolicy: true } } },
      });
      if (!row) return undefined;
      const policy = row.policy === null ? undefined : (storedDocument(row.policy) ?? 'invalid');
      return { accountId: row.accountId, policy, account: accountOf(row.account?.agentPolicy) };
    },
    async providerLimits(provider) {
      const row = await prisma.mcpEndpoint.findUnique({ where: { provider }, select: { aginLimits: true } });
      if (!row || row.aginLimits === null) return undefined;
      const parsed = AginLimitsSchema.safeParse(row.aginLimits);
      return parsed.success ? parsed.data : undefined;
    },
    async toolAnnotations(provider, tool) {
      const row = await prisma.mcpTool.findFirst({ where: { provider, name: tool }, select: { annotations: true } });
      const a = row?.annotations;
      return a !== null && typeof a === 'object' && !Array.isArray(a) ? (a as Record<string, unknown>) : undefined;
    },
    async setAgentPolicy(accountId, agentId, policy) {
      if (agentId.includes('\u0000')) throw noAgent(agentId);
      // Raw SQL: a JSON column set to SQL NULL needs Prisma's DbNull, which only its runtime exports.
      const json = policy === null ? null : JSON.stringify(policy);
      const count =
        await prisma.$executeRaw`UPDATE "agents" SET "policy" = ${json}::jsonb WHERE "id" = ${agentId} AND "account_id" = ${accountId}`;
      if (count === 0) throw noAgent(agentId);
    },
    async accountPolicy(accountId) {
      const row = await prisma.account.findUnique({ where: { id: accountId }, select: { agentPolicy: true } });
      const policy = accountOf(row?.agentPolicy);
      return policy === 'invalid' ? EMPTY_ACCOUNT : policy;
    },
    async setAccountPolicy(accountId, policy) {
      await prisma.account.update({ where: { id: accountId }, data: { agentPolicy: policy as never } });
    },
    async assertOwnAgent(accountId, agentId) {
      if (agentId.includes('\u0000')) throw noAgent(agentId);
      const row = await prisma.agent.findFirst({ where: { id: agentId, accountId }, select: { id: true } });
      if (!row) throw noAgent(agentId);
    },
  };
}
