import type { EndpointStatus, RequiredCredential } from '../../probes/index.ts';
import type { McpEndpointModel } from '../db/generated/models.ts';
import type { PrismaClient } from '../db/index.ts';
import { ConflictError, newId, NotFoundError } from '../kernel/index.ts';
import { decodeCursor, encodeCursor } from './cursor.ts';
import { assertSlugNotRetired, retire } from './retired-providers.ts';
import type { AginLimits, Endpoint, EndpointSource, Page, ProbeRunRecord } from './types.ts';

/** What a new manual listing holds. */
export interface NewListing {
  provider: string;
  url: string;
  registeredBy: string;
  aginSupport: boolean;
  summary: string;
  audience: string | null;
  requiredCredentials: RequiredCredential[];
  purpose: string | null;
  risk: string | null;
  /** Per-AGIN limits the provider declares (issue 35); null: none. */
  aginLimits: AginLimits | null;
  /** The owning account, or null for an anonymous listing. */
  accountId: string | null;
}

/** What the owner of a listing may change: everything but its URL, provider slug and owner. */
export type ListingDetails = Omit<NewListing, 'provider' | 'url' | 'accountId'>;

/** Filters of the endpoint list. */
export interface EndpointFilter {
  status?: EndpointStatus | undefined;
  source?: EndpointSource | undefined;
  provider?: string | undefined;
}

/** Reads and writes listings; returns domain types, never Prisma rows. */
export interface EndpointRepository {
  findById(id: string): Promise<Endpoint | undefined>;
  findByUrl(url: string): Promise<Endpoint | undefined>;
  findByProvider(provider: string): Promise<Endpoint | undefined>;
  /**
   * Inserts a manual listing due for probing now; ConflictError when the URL or provider got taken
   * meanwhile, or the provider slug was retired by a removed listing this one may not succeed.
   */
  create(listing: NewListing, now: number): Promise<Endpoint>;
  /**
   * Replaces the anonymous listing `anonymousId` of the same URL and provider slug with `listing`
   * in one transaction; ConflictError when that listing was changed or removed meanwhile, or the
   * URL or provider got taken.
   */
  supersede(anonymousId: string, listing: NewListing, now: number): Promise<Endpoint>;
  /** Changes the details of listing `id`; NotFoundError when it is gone. */
  update(id: string, changes: Partial<ListingDetails>): Promise<Endpoint>;
  /**
   * Removes listing `id` of `accountId` with its tools and probes, retiring its slug (it stays
   * bound to the URL); false when there was none.
   */
  remove(id: string, accountId: string, now: number): Promise<boolean>;
  /** Registered endpoints in id order (ids sort by creation time). */
  list(filter: EndpointFilter, limit: number, cursor: string | undefined): Promise<Page<Endpoint>>;
  count(): Promise<number>;
  recentProbes(id: string, limit: number): Promise<ProbeRunRecord[]>;
}

/** A stored `agin_limits` read back: its whole-number limits, null when it holds none. */
function aginLimitsOf(value: unknown): AginLimits | null {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return null;
  const out: AginLimits = {};
  for (const key of ['per_minute', 'per_day'] as const) {
    const n = (value as Record<string, unknown>)[key];
    if (Number.isSafeInteger(n) && (n as number) >= 1) out[key] = n as number;
  }
  return Object.keys(out).length > 0 ? out : null;
}

/** Maps a row to the domain type. */
export function toEndpoint(row: McpEndpointModel): Endpoint {
  return {
    id: row.id,
    provider: row.provider,
    url: row.url,
    registeredBy: row.registeredBy,
    accountId: row.accountId,
    source: row.source === 'discovered' ? 'discovered' : 'manual',
    registryName: row.registryName,
    aginSupport: row.aginSupport,
    summary: row.summary,
    audience: row.audience,
    requiredCredentials: Array.isArray(row.requiredCredentials)
      ? (row.requiredCredentials as unknown as RequiredCredential[])
      : [],
    purpose: row.purpose,
    risk: row.risk,
    aginLimits: aginLimitsOf(row.aginLimits),
    status: row.status as EndpointStatus,
    toolCount: row.toolCount,
    lastProbeAt: row.lastProbeAt,
    lastProbeOk: row.lastProbeOk,
    lastLatencyMs: row.lastLatencyMs,
    lastError: row.lastError,
    protocolVersions: Array.isArray(row.protocolVersions)
      ? row.protocolVersions.filter((v): v is string => typeof v === 'string')
      : [],
    capabilities:
      row.capabilities !== null && typeof row.capabilities === 'object' && !Array.isArray(row.capabilities)
        ? (row.capabilities as Record<string, unknown>)
        : null,
    nextProbeAt: row.nextProbeAt,
    createdAt: row.createdAt,
  };
}

function isUniqueViolation(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === 'P2002';
}

/** The client inside an interactive transaction (the last `$transaction` overload takes one). */
type Transaction = Parameters<Parameters<PrismaClient['$transaction']>[0]>[0];

const TAKEN = 'That URL or provider slug was just listed by someone else.';

/** The row of a new manual listing, due for probing now. */
function newRow(listing: NewListing, now: number) {
  return {
    id: newId('mcp', now),
    ...listing,
    requiredCredentials: listing.requiredCredentials as never,
    aginLimits: (listing.aginLimits ?? undefined) as never,
    source: 'manual',
    status: 'registered',
    nextProbeAt: new Date(now),
    createdAt: new Date(now),
  };
}

/** Creates the endpoint repository over Prisma. */
export function createEndpointRepository(prisma: PrismaClient): EndpointRepository {
  /** Inserts a listing with `write` and checks its slug in the same transaction. */
  async function insert(listing: NewListing, write: (tx: Transaction) => Promise<McpEndpointModel>): Promise<Endpoint> {
    try {
      const row = await prisma.$transaction(async (tx) => {
        const created = await write(tx);
        await assertSlugNotRetired(tx, listing);
        return created;
      });
      return toEndpoint(row);
    } catch (error) {
      if (isUniqueViolation(error)) throw new ConflictError(TAKEN, { cause: error });
      throw error;
    }
  }
  return {
    async findById(id) {
      const row = await prisma.mcpEndpoint.findUnique({ where: { id } });
      return row ? toEndpoint(row) : undefined;
    },
    async findByUrl(url) {
      const row = await prisma.mcpEndpoint.findUnique({ where: { url } });
      return row ? toEndpoint(row) : undefined;
    },
    async findByProvider(provider) {
      const row = await prisma.mcpEndpoint.findUnique({ where: { provider } });
      return row ? toEndpoint(row) : undefined;
    },
    create: (listing, now) => insert(listing, (tx) => tx.mcpEndpoint.create({ data: newRow(listing, now) })),
    supersede: (anonymousId, listing, now) =>
      insert(listing, async (tx) => {
        // Only while it still belongs to nobody: an account that claimed it meanwhile keeps it. The
        // slug goes with the URL: agents trust it with credentials for this server.
        const { count } = await tx.mcpEndpoint.deleteMany({
          where: { id: anonymousId, accountId: null, url: listing.url, provider: listing.provider },
        });
        if (count === 0) throw new ConflictError('That listing was just changed by someone else.');
        return tx.mcpEndpoint.create({ data: newRow(listing, now) });
      }),
    async update(id, changes) {
      const { requiredCredentials, aginLimits, ...rest } = changes;
      if (aginLimits === null)
        // SQL NULL in a JSON column needs Prisma's DbNull, which only its runtime exports.
        await prisma.$executeRaw`UPDATE "mcp_endpoints" SET "agin_limits" = NULL WHERE "id" = ${id}`;
      const rows = await prisma.mcpEndpoint.updateManyAndReturn({
        where: { id },
        data: {
          ...rest,
          ...(requiredCredentials ? { requiredCredentials: requiredCredentials as never } : {}),
          ...(aginLimits ? { aginLimits: aginLimits as never } : {}),
        },
      });
      if (!rows[0]) throw new NotFoundError(`No MCP endpoint with id ${JSON.stringify(id)}.`);
      return toEndpoint(rows[0]);
    },
    remove: (id, accountId, now) =>
      prisma.$transaction(async (tx) => {
        // Tools and probe runs go with it (ON DELETE CASCADE); receipts name the provider and tool
        // and refer to no listing, so they stay.
        const row = await tx.mcpEndpoint.findFirst({ where: { id, accountId }, select: { provider: true, url: true } });
        if (!row || (await tx.mcpEndpoint.deleteMany({ where: { id, accountId } })).count === 0) return false;
        await retire(tx, [{ ...row, accountId }], now);
        return true;
      }),
    async list(filter, limit, cursor) {
      const after = cursor === undefined ? undefined : String(decodeCursor(cursor, 1)[0]);
      const rows = await prisma.mcpEndpoint.findMany({
        where: {
          ...(filter.status ? { status: filter.status } : {}),
          ...(filter.source ? { source: filter.source } : {}),
          ...(filter.provider ? { provider: filter.provider } : {}),
          ...(after !== undefined ? { id: { gt: after } } : {}),
        },
        orderBy: { id: 'asc' },
        take: limit + 1,
      });
      const items = rows.slice(0, limit).map(toEndpoint);
      return { items, nextCursor: rows.length > limit ? encodeCursor([items.at(-1)!.id]) : null };
    },
    count: () => prisma.mcpEndpoint.count(),
    async recentProbes(id, limit) {
      const rows = await prisma.probeRun.findMany({
        where: { endpointId: id },
        orderBy: [{ startedAt: 'desc' }, { id: 'desc' }],
        take: limit,
      });
      return rows.map((r) => ({
        startedAt: r.startedAt,
        ok: r.ok,
        latencyMs: r.latencyMs,
        protocolVersion: r.protocolVersion,
        serverInfo: (r.serverInfo ?? null) as Record<string, unknown> | null,
        toolCount: r.toolCount,
        error: r.error,
      }));
    },
  };
}
