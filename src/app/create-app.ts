import cors from 'cors';
import express, { type Express } from 'express';
import helmet from 'helmet';
import { pinoHttp } from 'pino-http';

import type { Config } from '../../config/index.ts';
import { createAccountService } from '../accounts/index.ts';
import type { Database } from '../db/index.ts';
import { errorHandler, jsonBody, notFound, requestId } from '../http/index.ts';
import { type Clock, systemClock } from '../kernel/index.ts';
import type { Logger } from '../log/index.ts';
import { accountRoutes } from '../routes/account.ts';
import { healthRoutes } from '../routes/health.ts';

/** What the app is built from; tests build as many isolated apps as they like. */
export interface AppDeps {
  config: Config;
  db: Database;
  log: Logger;
  clock?: Clock;
}

/**
 * Builds Plaza's Express app: request ids, logging, security headers, CORS, JSON bodies, the
 * routes of every surface, and the one final error handler. Does not listen (see startServer).
 */
export function createApp(deps: AppDeps): Express {
  const { config, db, log } = deps;
  const clock = deps.clock ?? systemClock;
  const accounts = createAccountService({ prisma: db.prisma, clock });

  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', config.trustProxy);
  app.set('etag', 'strong');

  app.use(requestId());
  app.use(
    pinoHttp({
      logger: log,
      genReqId: (req) => (req as express.Request).requestId,
      customProps: (req) => ({ request_id: (req as express.Request).requestId }),
      autoLogging: { ignore: (req) => req.url === '/health' },
      quietReqLogger: true,
    }),
  );
  const https = config.publicBaseUrl.startsWith('https:');
  app.use(
    helmet({
      // Over plain http (local development) HSTS and upgrade-insecure-requests would break the site.
      strictTransportSecurity: https,
      contentSecurityPolicy: { directives: { upgradeInsecureRequests: https ? [] : null } },
    }),
  );
  app.use(cors({ exposedHeaders: ['X-Request-Id', 'Retry-After', 'RateLimit', 'RateLimit-Policy', 'ETag'], maxAge: 600 }));
  app.use(jsonBody(config.bodyLimitBytes));

  app.use(healthRoutes({ db, serviceName: config.telemetry.serviceName }));
  app.use(accountRoutes({ accounts }));

  app.use(notFound());
  app.use(errorHandler(log));
  return app;
}
