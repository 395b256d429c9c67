import type { RequestListener } from 'node:http';

import express, { type Express } from 'express';
import type { Redis } from 'ioredis';

import type { Config } from '../../config/index.ts';
import type { ReceiptLog, ReceiptWriter } from '../../receipts/index.ts';
import type { NewSession } from '../accounts/index.ts';
import type { Database } from '../db/index.ts';
import { answerEtag, errorHandler, jsonBody, notFound } from '../http/index.ts';
import type { Clock } from '../kernel/index.ts';
import type { Logger } from '../log/index.ts';
import type { Marketplace } from '../marketplace/index.ts';
import { pageFormRoutes, pageRoutes } from '../pages/index.ts';
import { healthRoutes } from '../routes/health.ts';
import { setSessionCookies } from '../routes/session-auth.ts';
import { tokenApiRoutes } from '../routes/token-api.ts';
import { websiteBodyErrors, websiteRoutes } from '../website/index.ts';
import { mountApiRoutes } from './api-routes.ts';
import { mountEdge } from './edge.ts';
import { mountGatewayRoutes } from './gateway-routes.ts';
import { createPlazaServices } from './plaza-services.ts';

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
  const services = createPlazaServices(deps);
  const { config, db, log, clock, accounts, keys, receiptLog, receiptWriter, redis, website, marketplace } = services;
  const { oauth, selfService, policy, gateway } = services;

  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', config.trustProxy);
  app.set('etag', answerEtag);

  const { https, logRequest, apiHeaders, corsHeaders } = mountEdge(app, { config, log });
  // The hottest GETs first: a load balancer's /health walks no other router.
  app.use(healthRoutes({ db, serviceName: config.telemetry.serviceName }));
  // The gateway reads its own bodies (JSON-RPC, streamed through), so it comes before jsonBody.
  mountGatewayRoutes(app, services, https);
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
  mountApiRoutes(app, services, https);
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

export { withPolicyRoutes } from './api-routes.ts';
