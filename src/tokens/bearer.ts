import { type AccountService, bearerToken } from '../accounts/index.ts';
import { AuthError, ForbiddenError } from '../kernel/index.ts';
import type { GuestTokens } from './guest-tokens.ts';

/** Scopes an account API key carries: everything the token API offers. */
export const ACCOUNT_SCOPES = ['chat', 'agents:read', 'agents:write'] as const;

/** Who a token API request acts for. */
export interface Principal {
  kind: 'guest' | 'account';
  /** The guest id or the account id; what usage and limits are counted against. */
  subject: string;
  scopes: string[];
  /** The API key id (accounts) or token id `jti` (guests). */
  credentialId: string;
}

/** Resolves an `Authorization` header value to a principal, framework-free. */
export type BearerVerifier = (header: string | undefined) => Promise<Principal>;

/**
 * Accepts either a guest JWT or an account API key (`plz_…`). Throws AuthError when the header is
 * missing, malformed, expired, revoked or otherwise not valid.
 */
export function createBearerVerifier(deps: {
  guestTokens: GuestTokens;
  accounts: Pick<AccountService, 'authenticateApiKey'>;
}): BearerVerifier {
  return async (header) => {
    const token = bearerToken(header);
    if (token.startsWith('plz_')) {
      const key = await deps.accounts.authenticateApiKey(token);
      return { kind: 'account', subject: key.accountId, scopes: [...ACCOUNT_SCOPES], credentialId: key.keyId };
    }
    if (token.startsWith('agt_'))
      throw new AuthError(
        "This is an agent token (agt_…), the MCP gateway's credential; this route takes a guest token (POST /api/auth/guest-token) or an account API key (plz_…).",
      );
    if (token.split('.').length !== 3) throw new AuthError('Bearer token is neither a Plaza API key nor a JWT.');
    const claims = await deps.guestTokens.verify(token);
    return { kind: 'guest', subject: claims.guestId, scopes: claims.scopes, credentialId: claims.jti };
  };
}

/** Throws ForbiddenError unless `principal` holds `scope` (e.g. a guest on an account-only route). */
export function requireScope(principal: Principal, scope: string): void {
  if (!principal.scopes.includes(scope)) {
    throw new ForbiddenError(
      principal.kind === 'guest'
        ? `A guest token cannot do this; use an account API key (needs scope ${scope}).`
        : `Missing scope ${scope}.`,
    );
  }
}
