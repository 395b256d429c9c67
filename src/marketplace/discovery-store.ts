import { type DiscoveryStore, shortHash } from '../../probes/index.ts';
import type { Prisma } from '../db/index.ts';
import type { PrismaClient } from '../db/index.ts';
import { newId } from '../kernel/index.ts';
import { RESERVED_PROVIDERS } from './listing-input.ts';
import { normaliseListingUrl } from './listing-service.ts';
import { findRetired, mayTakeRetired, retire } from './retired-providers.ts';

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * Discovery's storage: discovered servers share the listing table with manual ones (source
 * `discovered`, `registry_name` = the registry's identity, the URL normalised alike). A URL
 * someone listed by hand is never overwritten; a provider slug taken by another endpoint, retired
 * for another URL, or reserved, gets a hash suffix. A discovered listing keeps its slug while it
 * lasts, and a removed or moved one's slug stays bound to its old URL: the gateway routes callers'
 * credentials by slug, and a registry entry that moves is not to take them to its new address.
 */
export function createDiscoveryStore(prisma: PrismaClient): DiscoveryStore {
  async function freeProvider(wanted: string, registryName: string, url: string): Promise<string> {
    if (!RESERVED_PROVIDERS.has(wanted)) {
      const holder = await prisma.mcpEndpoint.findUnique({ where: { provider: wanted }, select: { url: true } });
      const retired = await findRetired(prisma, wanted);
      if ((!holder || holder.url === url) && (!retired || mayTakeRetired(retired, url))) return wanted;
    }
    const suffix = shortHash(`${registryName} ${url}`);
    return `${wanted.slice(0, 63 - suffix.length - 1).replace(/-+$/, '')}-${suffix}`;
  }

  /** Removes the discovered listings `where` selects, retiring their slugs; the number removed. */
  function removeWhere(where: Prisma.McpEndpointWhereInput, now: number): Promise<number> {
    return prisma.$transaction(async (tx) => {
      const rows = await tx.mcpEndpoint.findMany({ where, select: { id: true, provider: true, url: true } });
      if (rows.length === 0) return 0;
      await retire(
        tx,
        rows.map((r) => ({ provider: r.provider, url: r.url, accountId: null })),
        now,
      );
      const { count } = await tx.mcpEndpoint.deleteMany({
        where: { id: { in: rows.map((r) => r.id) }, source: 'discovered' },
      });
      return count;
    });
  }

  return {
    async upsertDiscovered(servers, registrant, now) {
      let created = 0;
      let updated = 0;
      for (const found of servers) {
        // Stored as a manual listing's URL is, so one server is one listing whoever lists it first.
        const server = { ...found, url: normaliseListingUrl(found.url).href };
        const existing = await prisma.mcpEndpoint.findUnique({ where: { url: server.url } });
        if (existing && existing.source !== 'discovered') continue;
        // The server moved to a new URL: its old discovered row goes, and its slug stays there.
        await removeWhere({ registryName: server.registryName, source: 'discovered', url: { not: server.url } }, now);
        const data = {
          registryName: server.registryName,
          summary: server.summary,
          requiredCredentials: server.requiredCredentials as never,
          registeredBy: registrant,
        };
        if (!existing) {
          const provider = await freeProvider(server.provider, server.registryName, server.url);
          await prisma.mcpEndpoint.create({
            data: {
              id: newId('mcp', now),
              provider,
              url: server.url,
              source: 'discovered',
              status: 'registered',
              nextProbeAt: new Date(now),
              createdAt: new Date(now),
              ...data,
            },
          });
          created++;
          continue;
        }
        const same =
          existing.registryName === server.registryName &&
          existing.summary === server.summary &&
          JSON.stringify(existing.requiredCredentials) === JSON.stringify(server.requiredCredentials);
        if (same) continue;
        // Its slug stays: renamed, the old one would be free for another server.
        await prisma.mcpEndpoint.update({ where: { id: existing.id }, data });
        updated++;
      }
      return { created, updated };
    },
    removeDiscovered: (registryNames, now) =>
      removeWhere({ registryName: { in: registryNames }, source: 'discovered' }, now),
    async acquireLease(name, owner, now, leaseMs) {
      const rows = await prisma.$queryRawUnsafe<{ owner: string }[]>(
        `INSERT INTO "job_leases" ("name", "owner", "until") VALUES ($1, $2, $3::timestamptz)
         ON CONFLICT ("name") DO UPDATE SET "owner" = EXCLUDED."owner", "until" = EXCLUDED."until"
          WHERE "job_leases"."until" < $4::timestamptz
         RETURNING "owner"`,
        name,
        owner,
        iso(now + leaseMs),
        iso(now),
      );
      return rows.length === 1;
    },
    async releaseLease(name, owner, notBefore) {
      await prisma.jobLease.updateMany({ where: { name, owner }, data: { owner: '', until: new Date(notBefore) } });
    },
    async pullSooner(name, at) {
      await prisma.$executeRawUnsafe(
        `UPDATE "job_leases" SET "until" = LEAST("until", $2::timestamptz) WHERE "name" = $1 AND "owner" = ''`,
        name,
        iso(at),
      );
    },
  };
}
