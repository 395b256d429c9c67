/**
 * The routes that read their own bodies and so come before the JSON body reader: the MCP gateway's
 * two entry points (JSON-RPC streamed through), and, when OAuth is enabled, the authorization
 * server and its consent form.
 */
import type { Express } from 'express';

import { consentRoutes } from '../pages/index.ts';
import { createRateLimiter, rateLimit } from '../rate-limit/index.ts';
import { oauthRoutes } from '../routes/oauth.ts';
import { cookieNames } from '../routes/session-auth.ts';
import type { PlazaServices } from './plaza-services.ts';

/** Mounts the gateway's endpoints and the OAuth routes on `app`. */
export function mountGatewayRoutes(
  app: Express,
  services: Pick<PlazaServices, 'config' | 'log' | 'redis' | 'gateway' | 'oauth' | 'agents' | 'selfService'>,
  https: boolean,
): void {
  const { config, log, redis, gateway, oauth, agents, selfService } = services;
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
}
