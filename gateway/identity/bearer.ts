import type { IncomingMessage } from 'node:http';

import { AuthError } from '../../src/kernel/index.ts';
import type { AgentAuthenticator, AgentIdentity } from './agin-card.ts';

/** What a request without a usable agent credential is told. */
const NO_BEARER = 'Send the agent credential as Authorization: Bearer <agent token>.';

/** The token of an `Authorization: Bearer <token>` header (scheme in any case), else undefined. */
export function bearerToken(authorization: string | undefined): string | undefined {
  const match = /^Bearer[ \t]+(\S+)\s*$/i.exec(authorization ?? '');
  return match?.[1] || undefined;
}

/**
 * The agent a gateway request comes from, by its Bearer credential through `agents` (whatever
 * credential kinds the authenticator accepts). Throws the kernel's AuthError for a missing or
 * refused credential; any other error means the credential could not be checked (storage down).
 */
export async function authenticateRequest(agents: AgentAuthenticator, req: IncomingMessage): Promise<AgentIdentity> {
  const token = bearerToken(req.headers.authorization);
  if (token === undefined) throw new AuthError(NO_BEARER);
  return agents.authenticate(token);
}
