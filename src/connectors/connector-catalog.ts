import type { CatalogConnector, CatalogTool, Connector, ToolCatalog } from '../../gateway/index.ts';
import type { PrismaClient } from '../db/index.ts';
import type { Clock } from '../kernel/index.ts';
import { RESERVED_PROVIDERS } from '../marketplace/index.ts';

/** Endpoint states whose tools are online (spec §4.2: healthy or degraded). */
const ONLINE = ['healthy', 'degraded'];
/**
 * Endpoint states the passthrough routes to: the online ones, and those that answer only callers
 * with a credential of their own (`auth_required`: their tools are unknown to Plaza, so they are
 * not on `/mcp`, but a caller who brings the credential reaches them on `/mcp/p/<provider>`).
 */
const ROUTABLE = [...ONLINE, 'auth_required'];
/** Tools that run only as tasks (MCP `execution.taskSupport` "required"). */
const TASK_ONLY = { execution: { path: ['taskSupport'], equals: 'required' } };
/** Preference among endpoints that share a provider slug. */
const RANK: Record<string, number> = { healthy: 0, degraded: 1, auth_required: 2 };

/** The gateway's catalog, and the passthrough's wider directory of routable connectors. */
export interface ConnectorCatalog extends ToolCatalog {
  /** A connector the passthrough may route to (online, or answering callers with credentials). */
  routable(provider: string): Promise<Connector | undefined>;
  /** Every online connector, with its recorded revisions and capabilities. */
  onlineConnectors(): Promise<CatalogConnector[]>;
}

/** Options of createConnectorCatalog. */
export interface ConnectorCatalogOptions {
  prisma: PrismaClient;
  clock: Clock;
  /** How long the online tool list, and a provider's connector, are reused before they are read again (default 2 000 ms). */
  cacheMs?: number;
}

function record(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

/** A connector as the gateway routes to it, from its endpoint row. */
function connectorOf(row: {
  id: string;
  url: string;
  provider: string;
  protocolVersions: unknown;
  capabilities: unknown;
  tools: { name: string }[];
}): CatalogConnector {
  const versions = Array.isArray(row.protocolVersions)
    ? row.protocolVersions.filter((v): v is string => typeof v === 'string').slice(0, 10)
    : [];
  return {
    provider: row.provider,
    url: row.url,
    endpointId: row.id,
    taskOnlyTools: new Set(row.tools.map((t) => t.name)),
    ...(versions.length > 0 ? { protocolVersions: versions } : {}),
    ...(row.capabilities === null || row.capabilities === undefined ? {} : { capabilities: record(row.capabilities) }),
  };
}

/**
 * The gateway's view of the marketplace: online connectors by provider and their tools, read from
 * the endpoint and tool tables the probes keep. When several endpoints share a provider slug, the
 * healthy one probed most recently wins.
 */
export function createConnectorCatalog(options: ConnectorCatalogOptions): ConnectorCatalog {
  const { prisma, clock } = options;
  const cacheMs = options.cacheMs ?? 2_000;
  let cached: { until: number; tools: Promise<CatalogTool[]> } | undefined;
  // Every tools/call looks its connector up: found connectors are reused for cacheMs (a listing
  // going offline is noticed within that, like the tool list), misses are not cached, so a
  // provider that just came online is routed at once.
  const online = new Map<string, { until: number; connector: CatalogConnector }>();
  const routable = new Map<string, { until: number; connector: CatalogConnector }>();

  async function readConnector(provider: string, statuses: string[]): Promise<CatalogConnector | undefined> {
    const rows = await prisma.mcpEndpoint.findMany({
      where: { provider, status: { in: statuses } },
      select: {
        id: true,
        url: true,
        provider: true,
        status: true,
        lastProbeAt: true,
        protocolVersions: true,
        capabilities: true,
        tools: { where: TASK_ONLY, select: { name: true } },
      },
      orderBy: [{ lastProbeAt: 'desc' }],
      take: 10,
    });
    // The best state wins, the one probed most recently among equals (the sort is stable).
    const best = rows.sort((a, b) => (RANK[a.status] ?? 9) - (RANK[b.status] ?? 9))[0];
    return best ? connectorOf(best) : undefined;
  }

  let connectors: { until: number; list: Promise<CatalogConnector[]> } | undefined;
  /** Every online connector, for the lists `/mcp` gathers (resources, prompts). */
  function onlineConnectors(): Promise<CatalogConnector[]> {
    if (connectors && connectors.until > clock.now()) return connectors.list;
    const list = prisma.mcpEndpoint
      .findMany({
        where: { status: { in: ONLINE }, provider: { notIn: [...RESERVED_PROVIDERS] } },
        select: {
          id: true,
          url: true,
          provider: true,
          protocolVersions: true,
          capabilities: true,
          tools: { where: TASK_ONLY, select: { name: true } },
        },
        orderBy: [{ provider: 'asc' }],
      })
      // One endpoint per provider (the slug is unique).
      .then((rows) => rows.map(connectorOf));
    connectors = { until: clock.now() + cacheMs, list };
    list.catch(() => (connectors = undefined));
    return list;
  }

  // The reads under way, per cache and provider: calls that find the entry stale at the same
  // moment (under load, every call in flight when it expires) share one read, not one each.
  const reading = new Map<typeof online, Map<string, Promise<CatalogConnector | undefined>>>([
    [online, new Map()],
    [routable, new Map()],
  ]);

  function lookUp(cache: typeof online, provider: string, statuses: string[]): Promise<CatalogConnector | undefined> {
    // No provider slug holds a NUL, and PostgreSQL refuses one in a query: the gateway took
    // that failure for a database outage and answered 503.
    if (provider.includes('\u0000') || RESERVED_PROVIDERS.has(provider)) return Promise.resolve(undefined);
    const hit = cache.get(provider);
    if (hit && hit.until > clock.now()) return Promise.resolve(hit.connector);
    const pending = reading.get(cache)!;
    const underway = pending.get(provider);
    if (underway) return underway;
    const read = readConnector(provider, statuses)
      .then((connector) => {
        if (connector) {
          if (cache.size >= 10_000) cache.clear();
          cache.set(provider, { until: clock.now() + cacheMs, connector });
        } else cache.delete(provider);
        return connector;
      })
      .finally(() => pending.delete(provider));
    pending.set(provider, read);
    return read;
  }

  return {
    onlineConnectors,
    byProvider: (provider) => lookUp(online, provider, ONLINE),
    routable: (provider) => lookUp(routable, provider, ROUTABLE),
    // Routable but not online: its only endpoints are auth_required.
    needsCredential: async (provider) =>
      (await lookUp(routable, provider, ROUTABLE)) !== undefined &&
      (await lookUp(online, provider, ONLINE)) === undefined,

    onlineTools(): Promise<CatalogTool[]> {
      if (cached && cached.until > clock.now()) return cached.tools;
      const tools = prisma.mcpTool
        .findMany({
          // A listing under a reserved slug (made before slugs were reserved) would sit beside
          // Plaza's own `platform__<tool>` names with descriptions of its choosing.
          where: { endpoint: { status: { in: ONLINE }, provider: { notIn: [...RESERVED_PROVIDERS] } } },
          select: {
            name: true,
            title: true,
            description: true,
            inputSchema: true,
            outputSchema: true,
            annotations: true,
            execution: true,
            icons: true,
            meta: true,
            endpoint: { select: { provider: true, status: true, lastProbeAt: true } },
          },
          orderBy: [{ endpoint: { provider: 'asc' } }, { name: 'asc' }],
        })
        .then((rows) => {
          const seen = new Set<string>();
          const out: CatalogTool[] = [];
          for (const row of rows) {
            const key = `${row.endpoint.provider}\n${row.name}`;
            if (seen.has(key)) continue;
            seen.add(key);
            out.push({
              provider: row.endpoint.provider,
              name: row.name,
              title: row.title,
              description: row.description,
              inputSchema: record(row.inputSchema),
              outputSchema: row.outputSchema === null ? null : record(row.outputSchema),
              annotations: record(row.annotations),
              execution: row.execution === null ? null : record(row.execution),
              icons: Array.isArray(row.icons) ? (row.icons as unknown as CatalogTool['icons']) : null,
              meta: row.meta === null ? null : record(row.meta),
            });
          }
          return out;
        });
      cached = { until: clock.now() + cacheMs, tools };
      tools.catch(() => (cached = undefined));
      return tools;
    },
  };
}
