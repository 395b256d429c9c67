import type { NextFunction, Request, Response } from 'express';
import { Router } from 'express';
import type { Redis } from 'ioredis';
import { z } from 'zod';

import type { AccountService } from '../accounts/index.ts';
import type { Logger } from '../log/index.ts';
import {
  type Endpoint,
  ENDPOINT_STATUSES,
  ListingBodySchema,
  type Marketplace,
  parseListingChanges,
  parseOrThrow,
  type ProbeRunRecord,
  PROVIDER_SLUG,
  type Tool,
} from '../marketplace/index.ts';
import { clientAddress, createRateLimiter, enforceRateLimit } from '../rate-limit/index.ts';
import { accountApiKey } from './account-key.ts';

const limit = (max: number, fallback: number) =>
  z.coerce
    .number()
    .int('must be an integer')
    .min(1, 'must be at least 1')
    .max(max, `must be at most ${max}`)
    .default(fallback);
const cursor = z.string().min(1).max(512, 'is not a cursor of this API');
const provider = z.string().regex(PROVIDER_SLUG, 'must be a provider slug (^[a-z0-9][a-z0-9-]{1,62}$)');

const CatalogQuerySchema = z.strictObject({ limit: limit(200, 50) });
const EndpointsQuerySchema = z.strictObject({
  limit: limit(200, 50),
  cursor: cursor.optional(),
  status: z.enum(ENDPOINT_STATUSES as [string, ...string[]]).optional(),
  source: z.enum(['manual', 'discovered']).optional(),
  provider: provider.optional(),
});
const EndpointQuerySchema = z.strictObject({ probes: limit(100, 20) });
const ToolsQuerySchema = z.strictObject({
  q: z.string().max(200, 'must be at most 200 characters').optional(),
  provider: provider.optional(),
  limit: limit(100, 20),
  cursor: cursor.optional(),
});

/** The JSON form of an endpoint (snake_case, ISO times, links). */
export function renderEndpoint(e: Endpoint): Record<string, unknown> {
  return {
    id: e.id,
    provider: e.provider,
    url: e.url,
    registrant: e.registeredBy,
    registered_by: e.registeredBy,
    // Whether an account owns it (only that account may change or remove it); which account is not public.
    account_owned: e.accountId !== null,
    source: e.source,
    registry_name: e.registryName,
    agin_support: e.aginSupport,
    summary: e.summary,
    audience: e.audience,
    required_credentials: e.requiredCredentials,
    purpose: e.purpose,
    risk: e.risk,
    // Per-AGIN limits the provider declares, which the gateway enforces (issue 35).
    agin_limits: e.aginLimits,
    status: e.status,
    tool_count: e.toolCount,
    last_probe:
      e.lastProbeAt === null
        ? null
        : { at: e.lastProbeAt.toISOString(), ok: e.lastProbeOk, latency_ms: e.lastLatencyMs, error: e.lastError },
    // What the server offers, from the last probe that got an answer (kept through failed probes).
    protocol_versions: e.protocolVersions,
    capabilities: e.capabilities,
    next_probe_at: e.nextProbeAt.toISOString(),
    created_at: e.createdAt.toISOString(),
    links: {
      self: `/api/mcp/endpoints/${e.id}`,
      tools: `/api/mcp/tools?provider=${e.provider}`,
      gateway: `/mcp/p/${e.provider}`,
    },
  };
}

/** The JSON form of an online tool (spec §2.2 columns plus §2.3 definition). */
export function renderTool(t: Tool): Record<string, unknown> {
  const summary = t.description.split(/\n|(?<=\.)\s/)[0]!.slice(0, 200);
  return {
    tool: t.name,
    name: t.name,
    title: t.title,
    provider: t.provider,
    health: t.health,
    summary,
    description: t.description,
    input_schema: t.inputSchema,
    output_schema: t.outputSchema,
    annotations: t.annotations,
    execution: t.execution,
    icons: t.icons,
    meta: t.meta,
    requires_agin: t.requiresAgin,
    caller_identity: t.callerIdentity,
    endpoint_id: t.endpointId,
    gateway_name: `${t.provider}__${t.name}`,
  };
}

function renderProbe(p: ProbeRunRecord): Record<string, unknown> {
  return {
    started_at: p.startedAt.toISOString(),
    ok: p.ok,
    latency_ms: p.latencyMs,
    protocol_version: p.protocolVersion,
    server_info: p.serverInfo,
    tool_count: p.toolCount,
    error: p.error,
  };
}

/** What the marketplace routes are built from. */
export interface MarketplaceRouteDeps {
  marketplace: Marketplace;
  accounts: AccountService;
  /** PLAZA_RATE_LIMIT_LISTINGS_PER_MIN: listing writes per client address, and per account. */
  writesPerMinute: number;
  trustProxy: boolean;
  /** Shared counters across instances when given. */
  redis: Redis | undefined;
  keyPrefix: string;
  log: Logger;
}

/**
 * Listing writes, counted: every write against its client address (first, so that writes with a
 * refused API key count too), and a write with an account's API key also against that account, so
 * neither many addresses with one account nor many accounts behind one address list without end.
 * Past either, 429 `rate_limited` with Retry-After. Every listing is probed (it points Plaza at a
 * host), so an unbounded stream of anonymous listings would aim Plaza's traffic at third parties.
 */
function countedListingWrites(deps: MarketplaceRouteDeps) {
  const limiter = (name: string) =>
    createRateLimiter({
      policy: { name, limit: deps.writesPerMinute, windowSeconds: 60 },
      redis: deps.redis,
      keyPrefix: deps.keyPrefix,
      log: deps.log,
    });
  // One pair of counters for every write route: a change or a removal spends the same budget.
  const perClient = limiter('listings');
  const perAccount = limiter('listings-account');
  return (options: { required: boolean }) => {
    const account = accountApiKey(deps.accounts, options);
    return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
      await enforceRateLimit(perClient, clientAddress(req, deps.trustProxy), res);
      await account(req, res, () => undefined);
      if (req.actingAccountId !== undefined) await enforceRateLimit(perAccount, req.actingAccountId, res);
      next();
    };
  };
}

/**
 * The marketplace routes (spec §4.2): listing registration without an approval gate (anonymous,
 * or owned by the account of an API key), changes and removal by the owning account, the public
 * catalog, registered endpoints, one endpoint with its probe history, and online tool search.
 * Listing writes are rate limited (countedListingWrites).
 */
export function marketplaceRoutes(deps: MarketplaceRouteDeps): Router {
  const { service } = deps.marketplace;
  const router = Router();
  const counted = countedListingWrites(deps);
  const maybeAccount = counted({ required: false });
  const account = counted({ required: true });

  router.post('/api/mcp/listings', maybeAccount, async (req, res) => {
    const body = parseOrThrow(ListingBodySchema, req.body, 'listing');
    const { endpoint, created, updated, supersedes } = await service.register(body, req.actingAccountId ?? null);
    if (created) res.setHeader('Location', `/api/mcp/endpoints/${endpoint.id}`);
    res
      .status(created ? 201 : 200)
      .json({ ...renderEndpoint(endpoint), created, updated, ...(supersedes ? { supersedes } : {}) });
  });

  router.patch('/api/mcp/listings/:id', account, async (req, res) => {
    const changes = parseListingChanges(req.body);
    const { endpoint, updated } = await service.update(String(req.params['id']), changes, req.actingAccountId!);
    res.json({ ...renderEndpoint(endpoint), updated });
  });

  router.delete('/api/mcp/listings/:id', account, async (req, res) => {
    const endpoint = await service.remove(String(req.params['id']), req.actingAccountId!);
    res.json({ id: endpoint.id, provider: endpoint.provider, url: endpoint.url, removed: true });
  });

  router.get('/api/mcp/catalog', async (req, res) => {
    const query = parseOrThrow(CatalogQuerySchema, req.query, 'query');
    const catalog = await service.catalog(query.limit);
    res.json({
      endpoint_count: catalog.endpointCount,
      tool_count: catalog.toolCount,
      endpoints: catalog.endpoints.items.map(renderEndpoint),
      tools: catalog.tools.items.map(renderTool),
      links: { endpoints: '/api/mcp/endpoints', tools: '/api/mcp/tools', listings: '/api/mcp/listings' },
    });
  });

  router.get('/api/mcp/endpoints', async (req, res) => {
    const query = parseOrThrow(EndpointsQuerySchema, req.query, 'query');
    const page = await service.listEndpoints(
      { status: query.status as Endpoint['status'] | undefined, source: query.source, provider: query.provider },
      query.limit,
      query.cursor,
    );
    res.json({ endpoints: page.items.map(renderEndpoint), count: page.items.length, next_cursor: page.nextCursor });
  });

  router.get('/api/mcp/endpoints/:id', async (req, res) => {
    const query = parseOrThrow(EndpointQuerySchema, req.query, 'query');
    const { endpoint, probes } = await service.getEndpoint(String(req.params['id']), query.probes);
    res.json({ ...renderEndpoint(endpoint), probes: probes.map(renderProbe) });
  });

  router.get('/api/mcp/tools', async (req, res) => {
    const query = parseOrThrow(ToolsQuerySchema, req.query, 'query');
    const page = await service.searchTools(query);
    res.json({ tools: page.items.map(renderTool), count: page.items.length, next_cursor: page.nextCursor });
  });

  return router;
}
