import type { IncomingMessage } from 'node:http';

import { AuthError } from '../../src/kernel/index.ts';
import type { AgentAuthenticator, AgentIdentity, GatewayEndpoint } from './agin-card.ts';

/** What a request without a usable agent credential is told. */
const NO_BEARER = 'Send the agent credential as Authorization: Bearer <agent token>.';

/** The token of an `Authorization: Bearer <token>` header (scheme in any case), else undefined. */
export function bearerToken(authorization: string | undefined): string | undefined {
  const match = /^Bearer[ \t]+(\S+)\s*$/i.exec(authorization ?? '');
  return match?.[1] || undefined;
}

/**
 * The agent a gateway request comes from, by its Bearer credential through `agents` (whatever
 * credential kinds the authenticator accepts). `endpoint` is where the request was sent: a
 * credential bound to another endpoint (an OAuth access token's audience) is refused. Throws the
 * kernel's AuthError for a missing or refused credential (InsufficientScopeError for one without
 * a scope the endpoint needs); any other error means it could not be checked (storage down).
 */
export async function authenticateRequest(
  agents: AgentAuthenticator,
  req: IncomingMessage,
  endpoint: GatewayEndpoint,
): Promise<AgentIdentity> {
  const token = bearerToken(req.headers.authorization);
  if (token === undefined) throw new AuthError(NO_BEARER);
  return agents.authenticate(token, endpoint);
}
