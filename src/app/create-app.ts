import type { RequestListener } from 'node:http';

import cors from 'cors';
import express, { type Express } from 'express';
import helmet from 'helmet';
import type { Redis } from 'ioredis';

import type { Config } from '../../config/index.ts';
import {
  createJwsCheckpointSigner,
  createReceiptLog,
  createReceiptWriter,
  type ReceiptLog,
  type ReceiptWriter,
} from '../../receipts/index.ts';
import { createAccountService, type NewSession } from '../accounts/index.ts';
import { createAgentService } from '../agents/index.ts';
import { CONTRACT_DIR as AGPK_CONTRACT_DIR } from '../agpk/index.ts';
import type { Database } from '../db/index.ts';
import {
  answerEtag,
  apiSecurityHeaders,
  errorHandler,
  isApiPath,
  jsonBody,
  notFound,
  requestId,
  staticHeaders,
} from '../http/index.ts';
import { type Clock, systemClock } from '../kernel/index.ts';
import { createSigningKeyStore } from '../keys/index.ts';
import { type Logger, requestLogger } from '../log/index.ts';
import { createMarketplace, createProbeHostBudget, type Marketplace } from '../marketplace/index.ts';
import { buildOpenApiDocument, type OpenApiOptions, openApiRoutes } from '../openapi/index.ts';
import { consentRoutes, pageFormRoutes, pageRoutes } from '../pages/index.ts';
import { createPolicy, policyComponents, policyOperations, policySecuritySchemes } from '../policy/index.ts';
import { createRateLimiter, createRedisClient, rateLimit } from '../rate-limit/index.ts';
import { accountRoutes } from '../routes/account.ts';
import { agentPolicyRoutes } from '../routes/agent-policy.ts';
import { agentRoutes } from '../routes/agents.ts';
import { agpkContractRoutes } from '../routes/agpk-contract.ts';
import { healthRoutes } from '../routes/health.ts';
import { jwksRoutes } from '../routes/jwks.ts';
import { marketplaceRoutes } from '../routes/marketplace.ts';
import { oauthRoutes } from '../routes/oauth.ts';
import { receiptRoutes } from '../routes/receipts.ts';
import { cookieNames, setSessionCookies } from '../routes/session-auth.ts';
import { TOKEN_API_AUDIENCE, tokenApiRoutes } from '../routes/token-api.ts';
import { createBearerVerifier, createGuestTokens } from '../tokens/index.ts';
import { createWebsite, websiteBodyErrors, websiteOpenApiOptions, websiteRoutes } from '../website/index.ts';
import { createGatewayHandlers } from './gateway.ts';
import { createOAuthServer } from './oauth-server.ts';
import { createSelfService } from './self-service.ts';

/** What the app is built from; tests build as many isolated apps as they like. */
export interface AppDeps {
  config: Config;
  db: Database;
  log: Logger;
  clock?: Clock;
}

/** A composed Plaza: the Express app, the services background work needs, and the way to close them. */
export interface Plaza {
  app: Express;
  /** What the HTTP server calls: plain chat completions in their lane, everything else through `app`. */
  handler: RequestListener;
  receiptLog: ReceiptLog;
  receiptWriter: ReceiptWriter;
  marketplace: Marketplace;
  /** The shared Redis connection (REDIS_URL), when there is one. */
  redis: Redis | undefined;
  /**
   * Ends the gateway's open notification streams and refuses new ones, so that a stopping server
   * does not wait out its drain time for streams that never end (their clients open them again).
   */
  endStreams(): void;
  /** Bytes of gateway answers held for clients that have not read them yet (in all, or one agent's). */
  heldAnswerBytes(agentId?: string): number;
  /** Flushes receipts and releases clients and timers (not the database, which the caller owns). */
  close(): Promise<void>;
}

/**
 * Builds Plaza's Express app: request ids, logging, security headers, CORS, the MCP gateway, JSON
 * bodies, the routes of every surface, and the one final error handler. Does not listen (see
 * startServer).
 */
export function createApp(deps: AppDeps): Express {
  return createPlaza(deps).app;
}

/** Composes every service over one database and returns the app with what must be closed. */
export function createPlaza(deps: AppDeps): Plaza {
  const { config, db, log } = deps;
  const clock = deps.clock ?? systemClock;
  const accounts = createAccountService({ prisma: db.prisma, clock });
  // Checkpoint signatures must stay verifiable for as long as receipts are kept.
  const keys = createSigningKeyStore({ prisma: db.prisma, clock, retentionSeconds: { receipts: Infinity } });
  const receiptLog = createReceiptLog({
    db,
    log,
    clock,
    signer: createJwsCheckpointSigner(() => keys.activeKey('receipts')),
  });
  const receiptWriter = createReceiptWriter({
    db,
    log,
    clock,
    durability: config.receipts.durability,
    spoolDir: config.receipts.spoolDir,
  });
  const redis = config.redisUrl
    ? createRedisClient(config.redisUrl, log, { commandTimeoutMs: config.redisCommandTimeoutMs })
    : undefined;
  const website = createWebsite({ config, prisma: db.prisma, clock, log, redis });
  const marketplace = createMarketplace({
    db,
    clock,
    log,
    settings: config.marketplace,
    hostBudget: createProbeHostBudget(
      createRateLimiter({
        policy: { name: 'probe-host', limit: config.marketplace.probeHostRequestsPerMinute, windowSeconds: 60 },
        redis,
        keyPrefix: config.rateLimits.keyPrefix,
        log,
      }),
    ),
  });
  const openApi = buildOpenApiDocument(
    withPolicyRoutes(websiteOpenApiOptions({ serverUrl: config.publicBaseUrl, version: '1.0.0' })),
  );
  const oauth = config.oauth.enabled ? createOAuthServer({ config, db, clock, keys, log }) : undefined;
  const agents = createAgentService({
    prisma: db.prisma,
    clock,
    ...(oauth ? { accessTokens: oauth.accessTokens } : {}),
  });
  const verify = createBearerVerifier({
    guestTokens: createGuestTokens({ keys, clock, issuer: config.publicBaseUrl, audience: TOKEN_API_AUDIENCE }),
    accounts,
  });
  const selfService = createSelfService({ config, db, log, clock, accounts, redis });
  // Who may call what (issue 35): the gateway asks it on every entry point.
  const policy = createPolicy({ prisma: db.prisma, redis, keyPrefix: config.rateLimits.keyPrefix, clock, log });
  const gateway = createGatewayHandlers({
    config,
    db,
    clock,
    keys,
    agents,
    receipts: receiptWriter,
    onCall: (endpointId) => marketplace.recordDemand(endpointId),
    onToolsChanged: (endpointId) => marketplace.refreshTools(endpointId),
    platformTools: selfService.platformTools,
    authorize: policy.authorize,
    redis,
    log,
  });

  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', config.trustProxy);
  app.set('etag', answerEtag);

  app.use(requestId(app));
  const logRequest = requestLogger(log, {
    quietPaths: new Set(['/health']),
    requestId: (req) => (req as { requestId?: string }).requestId,
  });
  app.use(logRequest);
  const https = config.publicBaseUrl.startsWith('https:');
  // Pages get helmet's headers, fixed for the app's life: computed once, set directly on each
  // answer. The API, the gateway and the other machine-facing routes get an API set (docs/decisions/operations-and-scale-out.md,
  // "API answers carry an API security header set").
  const pageHeaders = staticHeaders(
    helmet({
      // Over plain http (local development) HSTS and upgrade-insecure-requests would break the site.
      strictTransportSecurity: https,
      contentSecurityPolicy: { directives: { upgradeInsecureRequests: https ? [] : null } },
    }),
  );
  const apiHeaders = apiSecurityHeaders({ https });
  app.use((req, res, next) => (isApiPath(req.url) ? apiHeaders : pageHeaders)(req, res, next));
  // CORS: preflights through the cors package; on every other request its fixed headers, set directly.
  const corsMiddleware = cors({
    exposedHeaders: [
      'X-Request-Id',
      'Retry-After',
      'RateLimit',
      'RateLimit-Policy',
      'ETag',
      'WWW-Authenticate',
      'Mcp-Session-Id',
      'MCP-Protocol-Version',
    ],
    maxAge: 600,
  });
  const corsHeaders = staticHeaders(corsMiddleware);
  app.use((req, res, next) =>
    req.method === 'OPTIONS' ? corsMiddleware(req, res, next) : corsHeaders(req, res, next),
  );
  // The hottest GETs first: a load balancer's /health walks no other router.
  app.use(healthRoutes({ db, serviceName: config.telemetry.serviceName }));
  // The gateway reads its own bodies (JSON-RPC, streamed through), so it comes before jsonBody.
  app.all('/mcp', (req, res, next) => {
    gateway.aggregate(req, res).catch(next);
  });
  app.all('/mcp/p/:provider', (req, res, next) => {
    gateway.passthrough(req, res, String(req.params['provider'])).catch(next);
  });
  if (oauth) {
    // Before the JSON body reader: the provider and the consent form read their own bodies.
    const limit = rateLimit(
      createRateLimiter({
        policy: { name: 'oauth', limit: config.oauth.requestsPerMinute, windowSeconds: 60 },
        redis,
        keyPrefix: config.rateLimits.keyPrefix,
        log,
      }),
      { trustProxy: config.trustProxy !== false },
    );
    app.use(
      oauthRoutes({ issuer: config.publicBaseUrl, resources: oauth.resources, handle: oauth.server.handle, limit }),
    );
    app.use(
      consentRoutes({
        provider: oauth.server.provider,
        agents,
        sessions: selfService.sessions,
        sessionCookie: cookieNames(https).session,
        siteOrigin: new URL(config.publicBaseUrl).origin,
        defaultResource: oauth.resources.resourceOf({}),
      }),
    );
  }
  const emailSignIn = {
    signIn: selfService.signIn,
    startSession: (res: express.Response, session: NewSession) => setSessionCookies(res, session, https),
    siteOrigin: new URL(config.publicBaseUrl).origin,
  };
  app.use(pageFormRoutes({ website, listings: marketplace.service, passwordReset: selfService.signIn, emailSignIn }));
  app.use(jsonBody(config.bodyLimitBytes));
  // The token API next: a chat completion is the API's heaviest and most frequent call.
  const tokenApi = tokenApiRoutes({
    config,
    db,
    log,
    clock,
    accounts,
    keys,
    redis,
    session: { sessions: selfService.sessions, https },
  });
  app.use(tokenApi.router);
  // Plain chat completions skip Express (see the lane), after the same edge as every API request.
  const completionsLane = tokenApi.lane((req, res) => {
    const next = () => undefined;
    logRequest(req, res, next);
    apiHeaders(req, res, next);
    corsHeaders(req, res, next);
  });
  // The public catalog next: its GETs are the most frequent page-independent calls.
  app.use(websiteRoutes(website));

  app.use(agpkContractRoutes({ dir: AGPK_CONTRACT_DIR }));
  app.use(accountRoutes({ accounts }));
  app.use(jwksRoutes({ keys }));
  app.use(
    agentRoutes({
      agents,
      verify,
      session: { sessions: selfService.sessions, https },
      writesPerMinute: config.agents.writesPerMinute,
      trustProxy: config.trustProxy !== false,
      redis,
      keyPrefix: config.rateLimits.keyPrefix,
      log,
      clients: oauth?.clients,
    }),
  );
  app.use(
    agentPolicyRoutes({
      policies: policy.service,
      verify,
      session: { sessions: selfService.sessions, https },
      writesPerMinute: config.agents.writesPerMinute,
      redis,
      keyPrefix: config.rateLimits.keyPrefix,
      log,
    }),
  );

  app.use(
    marketplaceRoutes({
      marketplace,
      accounts,
      writesPerMinute: config.marketplace.listingWritesPerMinute,
      trustProxy: config.trustProxy !== false,
      redis,
      keyPrefix: config.rateLimits.keyPrefix,
      log,
    }),
  );
  app.use(...selfService.routes);
  app.use(receiptRoutes({ accounts, receipts: receiptLog, checkpointMaxAgeMs: config.receipts.checkpointIntervalMs }));
  app.use(openApiRoutes({ document: openApi }));
  app.use(
    pageRoutes({
      website,
      listings: marketplace.service,
      packages: selfService.sources,
      passwordReset: selfService.signIn,
      emailSignIn,
    }),
  );
  app.use(websiteBodyErrors());

  app.use(notFound(app as unknown as Parameters<typeof notFound>[0]));
  app.use(errorHandler(log));
  return {
    app,
    handler: (req, res) => {
      if (!completionsLane(req, res)) app(req, res);
    },
    receiptLog,
    receiptWriter,
    marketplace,
    redis,
    endStreams: () => gateway.endStreams(),
    heldAnswerBytes: (agentId) => gateway.heldAnswerBytes(agentId),
    async close() {
      await receiptWriter
        .close()
        .catch((error: unknown) => log.error({ err: error }, 'closing the receipt writer failed'));
      await marketplace.close().catch(() => undefined);
      await gateway.close().catch(() => undefined);
      await policy.close().catch(() => undefined);
      await oauth?.close().catch(() => undefined);
      await selfService.close().catch(() => undefined);
      await redis?.quit().catch(() => undefined);
    },
  };
}

/** The website's OpenAPI options with the agent policy routes (issue 35) added. */
export function withPolicyRoutes(options: OpenApiOptions): OpenApiOptions {
  return {
    ...options,
    components: { ...options.components, ...policyComponents },
    operations: [...options.operations, ...policyOperations],
    securitySchemes: { ...options.securitySchemes, ...policySecuritySchemes },
  };
}
