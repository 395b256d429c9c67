/**
 * The edge every request passes first: request ids, request logging, security headers (pages get
 * helmet's, API paths an API set) and CORS. The completions lane, which skips Express, applies the
 * same pieces itself, so they are returned as well as mounted.
 */
import cors from 'cors';
import type { Express } from 'express';
import helmet from 'helmet';

import type { Config } from '../../config/index.ts';
import { apiSecurityHeaders, isApiPath, requestId, staticHeaders } from '../http/index.ts';
import { type Logger, requestLogger } from '../log/index.ts';

/** The edge's pieces, for what answers outside Express. */
export interface Edge {
  /** Whether Plaza is served over https (its public base URL says so). */
  https: boolean;
  logRequest: ReturnType<typeof requestLogger>;
  apiHeaders: ReturnType<typeof apiSecurityHeaders>;
  corsHeaders: ReturnType<typeof staticHeaders>;
}

/** Mounts the edge on `app` and returns its pieces. */
export function mountEdge(app: Express, deps: { config: Config; log: Logger }): Edge {
  const { config, log } = deps;
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
  return { https, logRequest, apiHeaders, corsHeaders };
}
