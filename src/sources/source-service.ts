import type { PrismaClient } from '../db/index.ts';
import { type Clock, ConflictError, newId, NotFoundError, ValidationError } from '../kernel/index.ts';
import type { SourceBody } from './input.ts';
import { type PackageSource, type SourceEvent, type SourceStatus, type SourceTrust, toSource } from './types.ts';

/** Filters of the list view. */
export interface SourceFilter {
  status?: SourceStatus | undefined;
  trust?: SourceTrust | undefined;
  risk?: string | undefined;
  packageId?: string | undefined;
  q?: string | undefined;
  /** Only the registrations of this account (`?mine=1`). */
  accountId?: string | undefined;
}

/** Registry operations behind the routes and the MCP tool. */
export interface SourceService {
  /** Records a registration (the worker picks it up); an identical pending/healthy one is returned instead. */
  register(
    body: SourceBody,
    registrant: { trust: SourceTrust; accountId: string | null },
  ): Promise<{ source: PackageSource; created: boolean }>;
  list(
    filter: SourceFilter,
    limit: number,
    cursor: string | undefined,
  ): Promise<{ items: PackageSource[]; nextCursor: string | null }>;
  get(id: string): Promise<{ source: PackageSource; events: SourceEvent[] }>;
  /** The live discovery list: healthy rows only, one per package_id. */
  live(q: string | undefined): Promise<PackageSource[]>;
}

function encodeCursor(source: PackageSource): string {
  return Buffer.from(JSON.stringify([source.createdAt.getTime(), source.id])).toString('base64url');
}

/** The range of a JavaScript Date (±100,000,000 days around 1970). */
const MAX_DATE_MS = 8.64e15;

function decodeCursor(cursor: string): { at: Date; id: string } {
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (
      Array.isArray(value) &&
      value.length === 2 &&
      Number.isSafeInteger(value[0]) &&
      Math.abs(value[0] as number) <= MAX_DATE_MS &&
      typeof value[1] === 'string' &&
      /^src_[0-9a-z]+$/.test(value[1])
    ) {
      return { at: new Date(value[0] as number), id: value[1] };
    }
  } catch {
    // fall through
  }
  throw new ValidationError('Invalid cursor: pass the next_cursor of a previous page unchanged.', { param: 'cursor' });
}

/**
 * The account a package_id belongs to: the one whose registration of it was last live (a
 * `known-user` source that became healthy), or none while only anonymous sources have been live.
 * Other registrants — another account, or anyone anonymously — cannot register that package_id
 * (docs/sources.md, "Who may register a package_id").
 */
export async function packageOwner(
  prisma: Pick<PrismaClient, 'packageSource'>,
  packageId: string,
): Promise<string | null> {
  const row = await prisma.packageSource.findFirst({
    where: { packageId, trust: 'known-user', liveSince: { not: null }, accountId: { not: null } },
    orderBy: [{ liveSince: 'desc' }, { id: 'desc' }],
    select: { accountId: true },
  });
  return row?.accountId ?? null;
}

/** The 409 for a registration of a package_id another account publishes. */
export function ownedElsewhere(packageId: string): ConflictError {
  return new ConflictError(
    `The package_id ${packageId} belongs to another account, which published it: only that account can register its versions. Choose another package_id.`,
    { param: 'package_id' },
  );
}

/** Creates the source registry service. */
export function createSourceService(deps: { prisma: PrismaClient; clock: Clock }): SourceService {
  const { prisma, clock } = deps;
  return {
    async register(body, registrant) {
      const owner = await packageOwner(prisma, body.package_id);
      if (owner !== null && owner !== registrant.accountId) throw ownedElsewhere(body.package_id);
      const existing = await prisma.packageSource.findFirst({
        where: {
          packageId: body.package_id,
          version: body.version,
          sha256: body.sha256,
          downloadUri: body.download_uri,
          trust: registrant.trust,
          accountId: registrant.accountId,
          status: { in: ['registered', 'healthy'] },
        },
      });
      if (existing) return { source: toSource(existing), created: false };
      const now = new Date(clock.now());
      const id = newId('src', clock.now());
      const row = await prisma.packageSource.create({
        data: {
          id,
          packageId: body.package_id,
          name: body.name,
          version: body.version,
          summary: body.summary,
          vendorName: body.vendor_name,
          downloadUri: body.download_uri,
          sha256: body.sha256,
          trust: registrant.trust,
          accountId: registrant.accountId,
          status: 'registered',
          stage: 'registered',
          nextCheckAt: now,
          createdAt: now,
          events: {
            create: {
              at: now,
              fromStatus: null,
              toStatus: 'registered',
              reason: registrant.trust === 'known-user' ? 'registered by a signed-in user' : 'registered anonymously',
            },
          },
        },
      });
      return { source: toSource(row), created: true };
    },

    async list(filter, limit, cursor) {
      const after = cursor === undefined ? undefined : decodeCursor(cursor);
      const q = filter.q?.trim();
      const rows = await prisma.packageSource.findMany({
        where: {
          ...(filter.status ? { status: filter.status } : {}),
          ...(filter.trust ? { trust: filter.trust } : {}),
          ...(filter.risk ? { risk: filter.risk } : {}),
          ...(filter.packageId ? { packageId: filter.packageId } : {}),
          ...(filter.accountId ? { accountId: filter.accountId } : {}),
          ...(q
            ? {
                OR: [
                  { packageId: { contains: q, mode: 'insensitive' as const } },
                  { name: { contains: q, mode: 'insensitive' as const } },
                  { vendorName: { contains: q, mode: 'insensitive' as const } },
                  { summary: { contains: q, mode: 'insensitive' as const } },
                ],
              }
            : {}),
          ...(after
            ? { AND: [{ OR: [{ createdAt: { lt: after.at } }, { createdAt: after.at, id: { lt: after.id } }] }] }
            : {}),
        },
        orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
        take: limit + 1,
      });
      const items = rows.slice(0, limit).map(toSource);
      return { items, nextCursor: rows.length > limit ? encodeCursor(items.at(-1)!) : null };
    },

    async get(id) {
      // No stored id holds a NUL, and PostgreSQL refuses one in a query (it answered 500).
      if (id.includes('\u0000')) throw new NotFoundError('No such package source.');
      const row = await prisma.packageSource.findUnique({
        where: { id },
        include: { events: { orderBy: [{ at: 'asc' }, { id: 'asc' }] } },
      });
      if (!row) throw new NotFoundError(`No package source ${id}.`);
      return {
        source: toSource(row),
        events: row.events.map((e) => ({ at: e.at, from: e.fromStatus, to: e.toStatus, reason: e.reason })),
      };
    },

    async live(q) {
      const term = q?.trim();
      const rows = await prisma.packageSource.findMany({
        where: {
          live: true,
          status: 'healthy',
          ...(term
            ? {
                OR: [
                  { packageId: { contains: term, mode: 'insensitive' as const } },
                  { name: { contains: term, mode: 'insensitive' as const } },
                  { summary: { contains: term, mode: 'insensitive' as const } },
                ],
              }
            : {}),
        },
        orderBy: [{ packageId: 'asc' }, { liveSince: 'desc' }],
        take: 5_000,
      });
      // The promotion keeps one live row per package_id; this guards the reader all the same.
      const seen = new Set<string>();
      return rows.map(toSource).filter((s) => !seen.has(s.packageId) && seen.add(s.packageId));
    },
  };
}
