/**
 * The AGIN identity card of the agent making a call (spec §2.4): who is calling, as providers see
 * it. Plaza alone sets it; whatever a caller sends under these names is replaced.
 */
export interface AginCard {
  aginId: string;
  agentPrincipal: string;
  displayName: string;
  ownerContext: string;
}

/** An authenticated agent: its card plus what Plaza needs to scope receipts. */
export interface AgentIdentity extends AginCard {
  agentId: string;
  accountId: string | null;
}

/** The gateway endpoint a credential is presented to: `/mcp` (no provider) or `/mcp/p/<provider>`. */
export interface GatewayEndpoint {
  provider?: string | undefined;
}

/**
 * Resolves an agent's gateway credential to its identity; throws the kernel's AuthError (the
 * gateway's InsufficientScopeError for a credential that lacks a scope the endpoint needs).
 * `endpoint` is where the credential was sent: a credential bound to one endpoint (an OAuth access
 * token's audience) is refused on every other.
 */
export interface AgentAuthenticator {
  authenticate(token: string, endpoint?: GatewayEndpoint): Promise<AgentIdentity>;
  /**
   * The endpoint's Protected Resource Metadata URL (RFC 9728), named in its 401 challenges so an
   * OAuth client finds the authorization server; undefined when Plaza offers no OAuth.
   */
  resourceMetadataUrl?(endpoint: GatewayEndpoint): string | undefined;
}
