import type { EndpointStatus, RequiredCredential } from '../../probes/index.ts';
import type { McpEndpointModel } from '../db/generated/models.ts';
import type { PrismaClient } from '../db/index.ts';
import { ConflictError, newId, NotFoundError } from '../kernel/index.ts';
import { decodeCursor, encodeCursor } from './cursor.ts';
import type { Endpoint, EndpointSource, Page, ProbeRunRecord } from './types.ts';

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
  /** Inserts a manual listing due for probing now; ConflictError when the URL or provider got taken meanwhile. */
  create(listing: NewListing, now: number): Promise<Endpoint>;
  /**
   * Replaces the anonymous listing `anonymousId` with `listing` in one transaction; ConflictError
   * when that listing was changed or removed meanwhile, or the URL or provider got taken.
   */
  supersede(anonymousId: string, listing: NewListing, now: number): Promise<Endpoint>;
  /** Changes the details of listing `id`; NotFoundError when it is gone. */
  update(id: string, changes: Partial<ListingDetails>): Promise<Endpoint>;
  /** Removes listing `id` of `accountId` with its tools and probes; false when there was none. */
  remove(id: string, accountId: string): Promise<boolean>;
  /** Registered endpoints in id order (ids sort by creation time). */
  list(filter: EndpointFilter, limit: number, cursor: string | undefined): Promise<Page<Endpoint>>;
  count(): Promise<number>;
  recentProbes(id: string, limit: number): Promise<ProbeRunRecord[]>;
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
    requiredCredentials: Array.isArray(row.requiredCredentials) ? (row.requiredCredentials as unknown as RequiredCredential[]) : [],
    purpose: row.purpose,
    risk: row.risk,
    status: row.status as EndpointStatus,
    toolCount: row.toolCount,
    lastProbeAt: row.lastProbeAt,
    lastProbeOk: row.lastProbeOk,
    lastLatencyMs: row.lastLatencyMs,
    lastError: row.lastError,
    nextProbeAt: row.nextProbeAt,
    createdAt: row.createdAt,
  };
}

function isUniqueViolation(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === 'P2002';
}

const TAKEN = 'That URL or provider slug was just listed by someone else.';

/** The row of a new manual listing, due for probing now. */
function newRow(listing: NewListing, now: number) {
  return {
    id: newId('mcp', now),
    ...listing,
    requiredCredentials: listing.requiredCredentials as never,
    source: 'manual',
    status: 'registered',
    nextProbeAt: new Date(now),
    createdAt: new Date(now),
  };
}

/** Creates the endpoint repository over Prisma. */
export function createEndpointRepository(prisma: PrismaClient): EndpointRepository {
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
    async create(listing, now) {
      try {
        return toEndpoint(await prisma.mcpEndpoint.create({ data: newRow(listing, now) }));
      } catch (error) {
        if (isUniqueViolation(error)) throw new ConflictError(TAKEN, { cause: error });
        throw error;
      }
    },
    async supersede(anonymousId, listing, now) {
      try {
        const row = await prisma.$transaction(async (tx) => {
          // Only while it still belongs to nobody: an account that claimed it meanwhile keeps it.
          const { count } = await tx.mcpEndpoint.deleteMany({ where: { id: anonymousId, accountId: null } });
          if (count === 0) throw new ConflictError('That listing was just changed by someone else.');
          return tx.mcpEndpoint.create({ data: newRow(listing, now) });
        });
        return toEndpoint(row);
      } catch (error) {
        if (isUniqueViolation(error)) throw new ConflictError(TAKEN, { cause: error });
        throw error;
      }
    },
    async update(id, changes) {
      const { requiredCredentials, ...rest } = changes;
      const rows = await prisma.mcpEndpoint.updateManyAndReturn({
        where: { id },
        data: { ...rest, ...(requiredCredentials ? { requiredCredentials: requiredCredentials as never } : {}) },
      });
      if (!rows[0]) throw new NotFoundError(`No MCP endpoint with id ${JSON.stringify(id)}.`);
      return toEndpoint(rows[0]);
    },
    async remove(id, accountId) {
      // Tools and probe runs go with it (ON DELETE CASCADE); receipts name the provider and tool
      // and refer to no listing, so they stay.
      const { count } = await prisma.mcpEndpoint.deleteMany({ where: { id, accountId } });
      return count > 0;
    },
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
      const rows = await prisma.probeRun.findMany({ where: { endpointId: id }, orderBy: [{ startedAt: 'desc' }, { id: 'desc' }], take: limit });
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
