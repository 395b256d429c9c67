import type { PrismaClient } from '../db/index.ts';
import type { KnowledgeDoc, KnowledgeSource } from './knowledge.ts';

const MAX_ROWS = 500;

/**
 * Live catalog data: online MCP tools (endpoint healthy or degraded) and healthy, live package
 * sources. Texts are the providers' own words and are the same in every locale.
 */
export function catalogKnowledge(prisma: PrismaClient): KnowledgeSource {
  return {
    async documents() {
      const [tools, packages] = await Promise.all([
        prisma.mcpTool.findMany({
          where: { endpoint: { status: { in: ['healthy', 'degraded'] } } },
          include: { endpoint: { select: { provider: true, status: true, summary: true } } },
          orderBy: [{ endpoint: { demandScore: 'desc' } }, { name: 'asc' }],
          take: MAX_ROWS,
        }),
        prisma.packageSource.findMany({
          where: { status: 'healthy', live: true },
          orderBy: { updatedAt: 'desc' },
          take: MAX_ROWS,
        }),
      ]);
      const docs: KnowledgeDoc[] = tools.map((tool) => ({
        id: `tool:${tool.endpointId}:${tool.name}`,
        title: `MCP tool ${tool.name} (${tool.endpoint.provider})`,
        text: `${tool.name} by ${tool.endpoint.provider}, ${tool.endpoint.status}: ${tool.description || tool.endpoint.summary}`,
        link: `/api/mcp/tools?provider=${encodeURIComponent(tool.endpoint.provider)}`,
      }));
      for (const pkg of packages) {
        docs.push({
          id: `package:${pkg.packageId}`,
          title: `Package ${pkg.name} ${pkg.version}`,
          text: `${pkg.name} (${pkg.packageId}) ${pkg.version} by ${pkg.vendorName}: ${pkg.summary}`,
          link: '/api/agpk/sources',
        });
      }
      return docs;
    },
  };
}
