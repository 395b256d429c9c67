import { type GatewayEndpoint, InsufficientScopeError } from '../../gateway/index.ts';
import { AuthError } from '../kernel/index.ts';
import type { AuthorizationServer } from './authorization-server.ts';
import { type GatewayResources, MCP_SCOPE } from './resources.ts';

/** The shape of the provider's opaque access tokens (256 random bits, base64url). */
const ACCESS_TOKEN_SHAPE = /^[A-Za-z0-9_-]{43}$/;

/** Checks OAuth access tokens presented to a gateway endpoint. */
export interface AccessTokenVerifier {
  /** True when `token` has the shape of an access token (so other credential kinds are told apart). */
  looksLikeAccessToken(token: string): boolean;
  /**
   * The agent an access token acts as. Throws AuthError when the token is unknown, expired,
   * revoked, or issued for another endpoint than `endpoint` (its audience must be that exact
   * resource), and InsufficientScopeError when it was granted without the `mcp` scope.
   */
  verify(token: string, endpoint: GatewayEndpoint): Promise<{ agentId: string; clientId: string }>;
}

/** Creates the verifier over the authorization server's storage. */
export function createAccessTokenVerifier(
  server: AuthorizationServer,
  resources: GatewayResources,
): AccessTokenVerifier {
  return {
    looksLikeAccessToken: (token) => ACCESS_TOKEN_SHAPE.test(token),
    async verify(token, endpoint) {
      const provider = await server.provider();
      const accessToken = await provider.AccessToken.find(token);
      if (!accessToken?.accountId)
        throw new AuthError(
          'Invalid, expired or revoked access token: sign in again (your MCP client starts the OAuth flow anew).',
        );
      const resource = resources.resourceOf(endpoint);
      const audiences = Array.isArray(accessToken.aud) ? accessToken.aud : [accessToken.aud];
      if (!audiences.includes(resource)) {
        throw new AuthError(
          `This access token was issued for ${audiences.join(', ')}, not ${resource}: a token is good for the one endpoint it was issued for (RFC 8707); ask for one with resource=${resource}.`,
        );
      }
      if (!accessToken.scopes.has(MCP_SCOPE))
        throw new InsufficientScopeError(
          `This access token lacks the "${MCP_SCOPE}" scope the gateway needs: ask for scope=${MCP_SCOPE}.`,
          MCP_SCOPE,
        );
      // A revoked grant (a refresh token used twice, a revoked agent) ends its access tokens at once.
      if (!accessToken.grantId || !(await provider.Grant.find(accessToken.grantId)))
        throw new AuthError("This access token's grant was revoked: sign in again.");
      return { agentId: accessToken.accountId, clientId: accessToken.clientId ?? '' };
    },
  };
}
