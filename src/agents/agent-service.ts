import { z } from 'zod';

import {
  type AgentAuthenticator,
  type AgentIdentity,
  cardText,
  cardTextDropping,
  type GatewayEndpoint,
  reservedOwnerContext,
} from '../../gateway/index.ts';
import type { PrismaClient } from '../db/index.ts';
import {
  AuthError,
  type Clock,
  ConflictError,
  hashSecret,
  newId,
  NotFoundError,
  randomToken,
  ValidationError,
} from '../kernel/index.ts';
import { looksLikeAgentToken, mintAgentToken } from './agent-tokens.ts';

/** An agent with its AGIN card, as the API shows it (spec §2.4 field names). */
export interface AgentView {
  id: string;
  agin_id: string;
  agent_principal: string;
  display_name: string;
  owner_context: string;
  status: 'active' | 'revoked';
  created_at: string;
}

/** The longest agent display name (the Account page's field holds as many characters). */
export const AGENT_NAME_MAX = 120;

/** The longest owner context. */
const OWNER_CONTEXT_MAX = 200;

/**
 * Body of `POST /api/agents`. The lengths here bound the text as sent (NFKC may lengthen it); the
 * stored form is checked again by {@link cardFields}.
 */
export const CreateAgentSchema = z.strictObject({
  display_name: z
    .string()
    .trim()
    .min(1, 'display_name must not be empty')
    .max(AGENT_NAME_MAX, `display_name is longer than ${AGENT_NAME_MAX} characters`),
  owner_context: z
    .string()
    .trim()
    .min(1)
    .max(OWNER_CONTEXT_MAX, `owner_context is longer than ${OWNER_CONTEXT_MAX} characters`)
    .optional(),
});

/** The prefix of the owner context Plaza gives an account's agents by default; no other account's agent may use it. */
const ACCOUNT_CONTEXT = 'account:';

/** The owner context of an agent created without one: its account's. */
function defaultOwnerContext(accountId: string): string {
  return `${ACCOUNT_CONTEXT}${accountId}`;
}

/** One card field in its stored form (see cardText), or a 400 naming the field and the character. */
function cardField(field: string, value: string, max: number): string {
  const checked = cardText(value);
  if ('refused' in checked) {
    const { codePoint, position, kind } = checked.refused;
    throw new ValidationError(
      `Invalid agent: ${field}: holds ${codePoint} (${kind}) at character ${position + 1}; AGIN card fields take visible text only (no control, format, private-use or unassigned characters).`,
      { param: field },
    );
  }
  if (checked.text === '') throw new ValidationError(`Invalid agent: ${field} must not be empty.`, { param: field });
  if ([...checked.text].length > max)
    throw new ValidationError(`Invalid agent: ${field} is longer than ${max} characters (in NFKC form).`, {
      param: field,
    });
  return checked.text;
}

/** The card fields of a new agent as stored: normalised, checked, the reserved owner contexts refused. */
function cardFields(
  accountId: string,
  input: z.infer<typeof CreateAgentSchema>,
): { displayName: string; ownerContext: string } {
  const displayName = cardField('display_name', input.display_name, AGENT_NAME_MAX);
  if (input.owner_context === undefined) return { displayName, ownerContext: defaultOwnerContext(accountId) };
  const ownerContext = cardField('owner_context', input.owner_context, OWNER_CONTEXT_MAX);
  // `account:<id>` is what Plaza vouches for (the default): providers get it in
  // `_meta.platform.owner_context`, so one account must not claim another's, nor Plaza's own
  // (`plaza`). Look-alikes count: case, fullwidth forms, spaces around the colon, Cyrillic letters.
  if (reservedOwnerContext(ownerContext) && ownerContext !== defaultOwnerContext(accountId)) {
    throw new ValidationError(
      `Invalid agent: owner_context: "${ACCOUNT_CONTEXT}…" is reserved for the agent's own account (${defaultOwnerContext(accountId)}, the default), and "plaza" for Plaza's own agents, look-alikes included (case, fullwidth or Cyrillic letters, spaces around the colon); choose another value.`,
      { param: 'owner_context' },
    );
  }
  return { displayName, ownerContext };
}

/**
 * The card fields of a stored agent as they are shown and stamped. Rows stored before the fields
 * were checked may hold what is refused today: they are read in the stored form (refused
 * characters dropped), a display name left empty becomes the agin_id, and an owner context that
 * reads as a reserved one other than the agent's own becomes its account's (Plaza's own agents,
 * with no account, keep theirs). So no provider is ever stamped a field that would fail the check.
 */
export function storedCard(row: {
  accountId: string | null;
  aginId: string;
  displayName: string;
  ownerContext: string | null;
}): { displayName: string; ownerContext: string } {
  const readable = (value: string) => {
    const checked = cardText(value);
    return 'text' in checked ? checked.text : cardTextDropping(value);
  };
  const displayName = readable(row.displayName) || row.aginId;
  let ownerContext = readable(row.ownerContext ?? '');
  if (
    row.accountId !== null &&
    reservedOwnerContext(ownerContext) &&
    ownerContext !== defaultOwnerContext(row.accountId)
  )
    ownerContext = defaultOwnerContext(row.accountId);
  return { displayName, ownerContext };
}

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

/** What the agent service needs of the OAuth authorization server. */
export interface AgentAccessTokens {
  looksLikeAccessToken(token: string): boolean;
  /** The agent the token acts as; throws AuthError (or the gateway's InsufficientScopeError). */
  verify(token: string, endpoint: GatewayEndpoint): Promise<{ agentId: string }>;
  /** The endpoint's Protected Resource Metadata URL, for 401 challenges. */
  resourceMetadataUrl(endpoint: GatewayEndpoint): string;
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

type AgentRow = {
  id: string;
  accountId: string | null;
  aginId: string;
  agentPrincipal: string;
  displayName: string;
  ownerContext: string | null;
  status: string;
  createdAt: Date;
};

function toView(row: AgentRow): AgentView {
  const card = storedCard(row);
  return {
    id: row.id,
    agin_id: row.aginId,
    agent_principal: row.agentPrincipal,
    display_name: card.displayName,
    owner_context: card.ownerContext,
    status: row.status === 'active' ? 'active' : 'revoked',
    created_at: row.createdAt.toISOString(),
  };
}

/** Creates the agent service. */
export function createAgentService(options: AgentServiceOptions): AgentService {
  const { prisma, clock } = options;
  const ttl = options.cacheTtlMs ?? 2_000;
  if (!(ttl >= 0)) throw new Error('cacheTtlMs must be >= 0');
  const cache = new Map<string, { identity: AgentIdentity; until: number }>();
  // This instance stops trusting the agent's old credentials at once; others within the TTL.
  const forget = (agentId: string) => {
    for (const [key, entry] of cache) if (entry.identity.agentId === agentId) cache.delete(key);
  };

  /** The identity an active agent row stands for, kept under `key` for the cache's TTL. */
  function remember(
    key: string,
    a: Parameters<typeof storedCard>[0] & {
      id: string;
      accountId: string | null;
      aginId: string;
      agentPrincipal: string;
    },
  ): AgentIdentity {
    const identity: AgentIdentity = {
      agentId: a.id,
      accountId: a.accountId,
      aginId: a.aginId,
      agentPrincipal: a.agentPrincipal,
      ...storedCard(a),
    };
    if (cache.size > 10_000) cache.clear();
    cache.set(key, { identity, until: clock.now() + ttl });
    return identity;
  }

  /** An OAuth access token: checked for `endpoint` (its audience), then its agent as a pasted token's. */
  async function authenticateAccessToken(
    accessTokens: AgentAccessTokens,
    token: string,
    endpoint: GatewayEndpoint,
  ): Promise<AgentIdentity> {
    const key = `${hashSecret(token)} ${endpoint.provider ?? ''}`;
    const cached = cache.get(key);
    if (cached && cached.until > clock.now()) return cached.identity;
    cache.delete(key);
    const { agentId } = await accessTokens.verify(token, endpoint);
    const a = await prisma.agent.findUnique({ where: { id: agentId } });
    if (a?.status !== 'active')
      throw new AuthError('Invalid or revoked agent credential: the agent this access token acts as was revoked.');
    return remember(key, a);
  }

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

    resourceMetadataUrl: options.accessTokens
      ? (endpoint) => options.accessTokens?.resourceMetadataUrl(endpoint)
      : undefined,

    async authenticate(token, endpoint = {}) {
      if (options.accessTokens?.looksLikeAccessToken(token))
        return authenticateAccessToken(options.accessTokens, token, endpoint);
      if (!looksLikeAgentToken(token)) {
        // The credential a caller most often sends here by mistake gets named.
        if (token.startsWith('plz_'))
          throw new AuthError(
            'This is an account API key (plz_…); the gateway takes an agent token (agt_…): create an agent with POST /api/agents and use its token.',
          );
        throw new AuthError(
          'Invalid agent credential: the gateway takes an agent token (agt_…), from POST /api/agents.',
        );
      }
      const hash = hashSecret(token);
      const cached = cache.get(hash);
      if (cached && cached.until > clock.now()) return cached.identity;
      const credential = await prisma.agentCredential.findUnique({ where: { hash }, include: { agent: true } });
      if (!credential || credential.revokedAt !== null || credential.agent.status !== 'active') {
        cache.delete(hash);
        throw new AuthError('Invalid or revoked agent credential.');
      }
      const a = credential.agent;
      return remember(hash, a);
    },
  };
}
