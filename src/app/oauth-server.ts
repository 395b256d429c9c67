import type { Config } from '../../config/index.ts';
import { createGuardedFetch } from '../../probes/index.ts';
import type { AgentAccessTokens } from '../agents/index.ts';
import { gatewaySessionKey } from '../connectors/index.ts';
import type { Database } from '../db/index.ts';
import type { Clock } from '../kernel/index.ts';
import type { SigningKeyStore } from '../keys/index.ts';
import type { Logger } from '../log/index.ts';
import {
  type AuthorizationServer,
  type ConnectedClients,
  createAccessTokenVerifier,
  createAuthorizationServer,
  createConnectedClients,
  createGatewayResources,
  type GatewayResources,
} from '../oauth/index.ts';
import { oauthErrorPage } from '../pages/index.ts';

/** The authorization server wired to Plaza: its storage, keys, guarded fetch, and the agent service's view of its tokens. */
export interface OAuthServer {
  server: AuthorizationServer;
  resources: GatewayResources;
  accessTokens: AgentAccessTokens;
  /** The clients connected to each agent, for the Account page. */
  clients: ConnectedClients;
  close(): Promise<void>;
}

/**
 * Builds Plaza's OAuth authorization server (PLAZA_OAUTH): issuer PUBLIC_BASE_URL, records in the
 * database, ID tokens signed with the `oauth` key of the signing key store, cookie keys derived
 * from the secret every instance shares, client metadata documents fetched through the SSRF guard
 * (loopback and private addresses only with PLAZA_ALLOW_PRIVATE_TARGETS) within the CIMD bounds,
 * no redirects followed.
 */
export function createOAuthServer(deps: {
  config: Config;
  db: Database;
  clock: Clock;
  keys: SigningKeyStore;
  log: Logger;
}): OAuthServer {
  const { config, db, clock } = deps;
  const resources = createGatewayResources(config.publicBaseUrl);
  const guarded = createGuardedFetch({
    allowPrivate: config.marketplace.allowPrivateTargets,
    timeoutMs: config.oauth.cimdTimeoutMs,
    connectTimeoutMs: config.oauth.cimdTimeoutMs,
    maxResponseBytes: config.oauth.cimdMaxBytes,
    maxRedirects: 0,
  });
  const server = createAuthorizationServer({
    issuer: config.publicBaseUrl,
    resources,
    prisma: db.prisma,
    clock,
    keys: deps.keys,
    sharedSecret: () => gatewaySessionKey(db.prisma, clock),
    fetch: guarded.fetch,
    cimdMaxBytes: config.oauth.cimdMaxBytes,
    accessTokenTtlS: config.oauth.accessTokenTtlS,
    behindProxy: config.trustProxy !== false,
    errorPage: oauthErrorPage,
    log: deps.log,
  });
  const verifier = createAccessTokenVerifier(server, resources);
  return {
    server,
    resources,
    accessTokens: {
      looksLikeAccessToken: verifier.looksLikeAccessToken,
      verify: verifier.verify,
      resourceMetadataUrl: (endpoint) => resources.metadataUrlOf(endpoint),
    },
    clients: createConnectedClients({ prisma: db.prisma, clock }),
    close: () => guarded.close(),
  };
}
