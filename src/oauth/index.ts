/** MCP authorization: Plaza as the gateway's OAuth 2.1 authorization server (oidc-provider). */
export type { AccessTokenVerifier } from './access-tokens.ts';
export { createAccessTokenVerifier } from './access-tokens.ts';
export type { AuthorizationServer, AuthorizationServerOptions } from './authorization-server.ts';
export { CONSENT_PATH, createAuthorizationServer, OAUTH_KEY_PURPOSE } from './authorization-server.ts';
export type { ConnectedClient, ConnectedClients } from './connected-clients.ts';
export { createConnectedClients } from './connected-clients.ts';
export type { GatewayResources } from './resources.ts';
export { createGatewayResources, MCP_SCOPE } from './resources.ts';
