import { type DiscoveryStore, shortHash } from '../../probes/index.ts';
import type { PrismaClient } from '../db/index.ts';
import { newId } from '../kernel/index.ts';
import { RESERVED_PROVIDERS } from './listing-input.ts';
import { normaliseListingUrl } from './listing-service.ts';

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * Discovery's storage: discovered servers share the listing table with manual ones (source
 * `discovered`, `registry_name` = the registry's identity, the URL normalised alike). A URL
 * someone listed by hand is never overwritten; a provider slug taken by another endpoint, or
 * reserved, gets a hash suffix.
 */
export function createDiscoveryStore(prisma: PrismaClient): DiscoveryStore {
  async function freeProvider(wanted: string, registryName: string, url: string): Promise<string> {
    const holder = RESERVED_PROVIDERS.has(wanted) ? undefined : await prisma.mcpEndpoint.findUnique({ where: { provider: wanted }, select: { url: true } });
    if (!RESERVED_PROVIDERS.has(wanted) && (!holder || holder.url === url)) return wanted;
    const suffix = shortHash(`${registryName} ${url}`);
    return `${wanted.slice(0, 63 - suffix.length - 1).replace(/-+$/, '')}-${suffix}`;
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
        // The server moved to a new URL: its old discovered row goes.
        await prisma.mcpEndpoint.deleteMany({ where: { registryName: server.registryName, source: 'discovered', url: { not: server.url } } });
        const provider = await freeProvider(server.provider, server.registryName, server.url);
        const data = {
          provider,
          registryName: server.registryName,
          summary: server.summary,
          requiredCredentials: server.requiredCredentials as never,
          registeredBy: registrant,
        };
        if (!existing) {
          await prisma.mcpEndpoint.create({
            data: { id: newId('mcp', now), url: server.url, source: 'discovered', status: 'registered', nextProbeAt: new Date(now), createdAt: new Date(now), ...data },
          });
          created++;
          continue;
        }
        const same =
          existing.provider === provider &&
          existing.registryName === server.registryName &&
          existing.summary === server.summary &&
          JSON.stringify(existing.requiredCredentials) === JSON.stringify(server.requiredCredentials);
        if (same) continue;
        await prisma.mcpEndpoint.update({ where: { id: existing.id }, data });
        if (existing.provider !== provider) await prisma.mcpTool.updateMany({ where: { endpointId: existing.id }, data: { provider } });
        updated++;
      }
      return { created, updated };
    },
    async removeDiscovered(registryNames) {
      const { count } = await prisma.mcpEndpoint.deleteMany({ where: { registryName: { in: registryNames }, source: 'discovered' } });
      return count;
    },
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
