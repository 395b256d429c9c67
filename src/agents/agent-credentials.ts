/**
 * The agent service's credential checks: pasted agent tokens and OAuth access tokens, each
 * resolved to the agent it acts as and cached for a short TTL, so the gateway's hot path rarely
 * reads the database while a revocation still takes effect on every instance within that TTL.
 */
import type { AgentAuthenticator, AgentIdentity, GatewayEndpoint } from '../../gateway/index.ts';
import type { PrismaClient } from '../db/index.ts';
import { AuthError, type Clock, hashSecret } from '../kernel/index.ts';
import { storedCard } from './agent-card.ts';
import { looksLikeAgentToken } from './agent-tokens.ts';

/** What the agent service needs of the OAuth authorization server. */
export interface AgentAccessTokens {
  looksLikeAccessToken(token: string): boolean;
  /** The agent the token acts as; throws AuthError (or the gateway's InsufficientScopeError). */
  verify(token: string, endpoint: GatewayEndpoint): Promise<{ agentId: string }>;
  /** The endpoint's Protected Resource Metadata URL, for 401 challenges. */
  resourceMetadataUrl(endpoint: GatewayEndpoint): string;
}

/** What createAgentCredentials needs: the agent service's options that concern credentials. */
export interface AgentCredentialOptions {
  prisma: PrismaClient;
  clock: Clock;
  /** How long a credential check is trusted (see AgentServiceOptions.cacheTtlMs). */
  ttl: number;
  accessTokens?: AgentAccessTokens;
}

/** The credential checks of the agent service, with the cache they share. */
export interface AgentCredentials extends AgentAuthenticator {
  /** Drops this instance's cached checks of the agent (see AgentService.forget). */
  forget(agentId: string): void;
}

/** Creates the credential checks over one cache. */
export function createAgentCredentials(options: AgentCredentialOptions): AgentCredentials {
  const { prisma, clock, ttl } = options;
  const cache = new Map<string, { identity: AgentIdentity; until: number }>();
  // Pasted-token checks under way: the calls that find a token's entry stale at the same moment
  // (under load, every call in flight when it expires) share one read of the database.
  const reading = new Map<string, Promise<AgentIdentity>>();
  // Bumped by forget: a read that began before is answered but not kept, so a revoked agent's
  // identity cannot come back into the cache from a read that was under way.
  let generation = 0;
  // This instance stops trusting the agent's old credentials at once; others within the TTL.
  const forget = (agentId: string) => {
    generation++;
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
    /** The generation the read began in: kept only while no agent was forgotten since. */
    since = generation,
  ): AgentIdentity {
    const identity: AgentIdentity = {
      agentId: a.id,
      accountId: a.accountId,
      aginId: a.aginId,
      agentPrincipal: a.agentPrincipal,
      ...storedCard(a),
    };
    if (since !== generation) return identity;
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
    const since = generation;
    const { agentId } = await accessTokens.verify(token, endpoint);
    const a = await prisma.agent.findUnique({ where: { id: agentId } });
    if (a?.status !== 'active')
      throw new AuthError('Invalid or revoked agent credential: the agent this access token acts as was revoked.');
    return remember(key, a, since);
  }

  /** Reads the credential whose hash is `hash`, and keeps the identity of an active one. */
  async function checkPastedToken(hash: string): Promise<AgentIdentity> {
    const since = generation;
    const credential = await prisma.agentCredential.findUnique({ where: { hash }, include: { agent: true } });
    if (!credential || credential.revokedAt !== null || credential.agent.status !== 'active') {
      cache.delete(hash);
      throw new AuthError('Invalid or revoked agent credential.');
    }
    return remember(hash, credential.agent, since);
  }

  return {
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
      const underway = reading.get(hash);
      if (underway) return underway;
      const read = checkPastedToken(hash).finally(() => reading.delete(hash));
      reading.set(hash, read);
      return read;
    },
  };
}
