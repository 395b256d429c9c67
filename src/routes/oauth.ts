import type { IncomingMessage, ServerResponse } from 'node:http';

import { type NextFunction, type Request, type Response, Router } from 'express';

import type { GatewayResources } from '../oauth/index.ts';
import { MCP_SCOPE } from '../oauth/index.ts';

/** The paths the authorization server (oidc-provider) answers itself. */
const PROVIDER_PATH = /^\/(?:oauth\/|\.well-known\/openid-configuration(?:[?]|$))/;

/** Registrations and authorization requests: each may make Plaza fetch a client's metadata document, or store a client. */
const COUNTED_PATH = /^\/oauth\/(?:register|authorize)(?:[/?]|$)/;

/**
 * MCP authorization's HTTP surface: Protected Resource Metadata (RFC 9728) for `/mcp` and each
 * `/mcp/p/<provider>`, the authorization server's metadata (RFC 8414, the same document as its
 * OpenID discovery), and the provider's endpoints under `/oauth/`. Mounted before the JSON body
 * reader: the provider reads its own (form-encoded) bodies.
 */
export function oauthRoutes(deps: {
  issuer: string;
  resources: GatewayResources;
  handle: (req: IncomingMessage, res: ServerResponse) => Promise<void>;
  /** The per-client limit of registrations and authorization requests (429 past it). */
  limit: (req: Request, res: Response, next: NextFunction) => Promise<void>;
}): Router {
  const router = Router();
  const metadata = (resource: string) => ({
    resource,
    authorization_servers: [deps.issuer],
    scopes_supported: [MCP_SCOPE],
    bearer_methods_supported: ['header'],
    resource_name: 'Plaza MCP gateway',
  });
  const sendMetadata = (res: Response, resource: string) => {
    res.setHeader('Cache-Control', 'public, max-age=300');
    res.json(metadata(resource));
  };
  // The root document describes /mcp, the gateway's main resource: a client that looks only there
  // (RFC 9728's fallback) connects to /mcp.
  router.get(['/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/mcp'], (_req, res) =>
    sendMetadata(res, deps.resources.resourceOf({})),
  );
  router.get('/.well-known/oauth-protected-resource/mcp/p/:provider', (req, res, next) => {
    const resource = deps.resources.resourceOf({ provider: String(req.params['provider']) });
    if (deps.resources.targetOf(resource) === undefined) return next();
    sendMetadata(res, resource);
  });
  // RFC 8414 §3: the issuer has no path, so its metadata is at the well-known URI itself.
  router.get('/.well-known/oauth-authorization-server', async (req, res) => {
    req.url = '/.well-known/openid-configuration';
    await deps.handle(req, res);
  });
  router.use(async (req, res, next) => {
    if (!PROVIDER_PATH.test(req.url)) return next();
    if (COUNTED_PATH.test(req.url)) await deps.limit(req, res, () => undefined);
    await deps.handle(req, res);
    // A path under /oauth/ the provider has no route for: Plaza's 404.
    if (!res.headersSent) next();
  });
  return router;
}
