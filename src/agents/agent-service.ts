/**
 * The agent service: creating, listing, rotating and revoking an account's agents. Their card
 * rules live in agent-card.ts and their credential checks (with the cache) in agent-credentials.ts.
 */
import type { AgentAuthenticator } from '../../gateway/index.ts';
import type { PrismaClient } from '../db/index.ts';
import { type Clock, ConflictError, newId, NotFoundError, randomToken, ValidationError } from '../kernel/index.ts';
import { type AgentView, cardFields, CreateAgentSchema, toView } from './agent-card.ts';
import { type AgentAccessTokens, createAgentCredentials } from './agent-credentials.ts';
import { mintAgentToken } from './agent-tokens.ts';

/** Options of createAgentService. */
export interface AgentServiceOptions {
  prisma: PrismaClient;
  clock: Clock;
  /**
   * How long an instance trusts a credential check. Revocation takes effect on every instance
   * within this time without any cross-instance messaging. Default 2 s.
   */
  cacheTtlMs?: number;
  /**
   * OAuth access tokens (src/oauth), taken as agent credentials next to pasted agent tokens: each
   * acts as the agent its grant names, on the one endpoint it was issued for.
   */
  accessTokens?: AgentAccessTokens;
}

/** Agents and their gateway credentials. */
export interface AgentService extends AgentAuthenticator {
  /** Creates an agent for an account; returns it and its credential (shown once). */
  create(accountId: string, body: unknown): Promise<{ agent: AgentView; token: string }>;
  /** Agents of an account, newest first. */
  list(accountId: string): Promise<AgentView[]>;
  /**
   * Issues a new credential for an active agent of the account (shown once) and revokes every
   * earlier one, for a token that was lost; a revoked agent stays revoked (409).
   */
  rotateToken(accountId: string, agentId: string): Promise<{ agent: AgentView; token: string }>;
  /** Revokes an agent of the account and all its credentials, OAuth grants and tokens included. */
  revoke(accountId: string, agentId: string): Promise<AgentView>;
  /**
   * Drops this instance's cached credential checks of the agent, after one of its credentials was
   * ended elsewhere (an OAuth client disconnected): other instances let go within the cache's TTL.
   */
  forget(agentId: string): void;
}

/** Creates the agent service. */
export function createAgentService(options: AgentServiceOptions): AgentService {
  const { prisma, clock } = options;
  const ttl = options.cacheTtlMs ?? 2_000;
  if (!(ttl >= 0)) throw new Error('cacheTtlMs must be >= 0');
  const credentials = createAgentCredentials({
    prisma,
    clock,
    ttl,
    ...(options.accessTokens ? { accessTokens: options.accessTokens } : {}),
  });
  const { forget } = credentials;

  return {
    async create(accountId, body) {
      const parsed = CreateAgentSchema.safeParse(body ?? {});
      if (!parsed.success) {
        const issue = parsed.error.issues[0];
        const field = issue?.path.join('.') || null;
        // The message names the field (a newcomer sends displayName, or nothing at all).
        const unknown = parsed.error.issues.find((i) => i.code === 'unrecognized_keys');
        const hint = unknown
          ? `unknown field(s) ${unknown.keys.join(', ')}; an agent takes display_name and owner_context`
          : undefined;
        const what =
          issue === unknown ? hint : `${field ?? 'body'}: ${issue?.message ?? 'invalid'}${hint ? ` (${hint})` : ''}`;
        throw new ValidationError(`Invalid agent: ${what}.`, { param: field, details: parsed.error.issues });
      }
      const { displayName, ownerContext } = cardFields(accountId, parsed.data);
      const id = newId('agt', clock.now());
      const credential = mintAgentToken();
      const row = await prisma.agent.create({
        data: {
          id,
          accountId,
          aginId: `agin_${randomToken(12)}`,
          agentPrincipal: `principal:${accountId}/${id}`,
          displayName,
          ownerContext,
          createdAt: new Date(clock.now()),
          credentials: { create: { id: newId('cred', clock.now()), hash: credential.hash } },
        },
      });
      return { agent: toView(row), token: credential.secret };
    },

    async list(accountId) {
      const rows = await prisma.agent.findMany({ where: { accountId }, orderBy: { createdAt: 'desc' } });
      return rows.map(toView);
    },

    async rotateToken(accountId, agentId) {
      if (agentId.includes('\u0000')) throw new NotFoundError('No such agent in this account.');
      const now = new Date(clock.now());
      const credential = mintAgentToken();
      const row = await prisma.$transaction(async (tx) => {
        // Rotations of one agent take turns on its row, so each revokes the credential the one
        // before it issued: under READ COMMITTED alone, racing rotations each revoked only what
        // was committed when they started and all left their new token live. A revoke updates
        // the row too, so it waits for (or is seen by) a rotation.
        const locked = await tx.$queryRaw<
          { id: string }[]
        >`SELECT "id" FROM "agents" WHERE "id" = ${agentId} AND "account_id" = ${accountId} FOR UPDATE`;
        if (locked.length === 0) throw new NotFoundError(`No agent ${agentId} in this account.`);
        const agent = await tx.agent.findUniqueOrThrow({ where: { id: agentId } });
        if (agent.status !== 'active')
          throw new ConflictError(`Agent ${agentId} is revoked; create a new agent instead.`);
        await tx.agentCredential.updateMany({ where: { agentId, revokedAt: null }, data: { revokedAt: now } });
        await tx.agentCredential.create({
          data: { id: newId('cred', clock.now()), agentId, hash: credential.hash, createdAt: now },
        });
        return agent;
      });
      forget(agentId);
      return { agent: toView(row), token: credential.secret };
    },

    async revoke(accountId, agentId) {
      // No stored id holds a NUL, and PostgreSQL refuses one in a query (it answered 500).
      if (agentId.includes('\u0000')) throw new NotFoundError('No such agent in this account.');
      const row = await prisma.agent.findFirst({ where: { id: agentId, accountId } });
      if (!row) throw new NotFoundError(`No agent ${agentId} in this account.`);
      const now = new Date(clock.now());
      const [updated] = await prisma.$transaction([
        prisma.agent.update({ where: { id: agentId }, data: { status: 'revoked', revokedAt: row.revokedAt ?? now } }),
        prisma.agentCredential.updateMany({ where: { agentId, revokedAt: null }, data: { revokedAt: now } }),
        // Its OAuth grants, codes and tokens: refresh tokens stop working at once, access tokens
        // on every instance within the credential cache's TTL.
        prisma.oAuthRecord.deleteMany({ where: { agentId } }),
      ]);
      forget(agentId);
      return toView(updated);
    },

    forget,
    resourceMetadataUrl: credentials.resourceMetadataUrl,
    authenticate: (token, endpoint) => credentials.authenticate(token, endpoint),
  };
}
