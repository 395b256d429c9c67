-- AlterTable
ALTER TABLE "mcp_endpoints" ADD COLUMN     "last_error" TEXT,
ADD COLUMN     "last_latency_ms" INTEGER,
ADD COLUMN     "last_probe_ok" BOOLEAN;

-- AlterTable
ALTER TABLE "mcp_tools" ADD COLUMN     "provider" TEXT NOT NULL DEFAULT '';

-- DropIndex
DROP INDEX "mcp_endpoints_provider_idx";

-- CreateIndex
CREATE UNIQUE INDEX "mcp_endpoints_provider_key" ON "mcp_endpoints"("provider");

-- CreateIndex
CREATE INDEX "mcp_endpoints_registry_name_idx" ON "mcp_endpoints"("registry_name");

-- CreateIndex
CREATE INDEX "mcp_tools_provider_name_idx" ON "mcp_tools"("provider", "name");

-- Full-text search over tool name (A), provider (B) and description (C). An expression index has
-- no schema.prisma form; src/marketplace/tool-search.ts repeats this exact expression so the
-- planner can use it. The 'simple' configuration behaves the same on PGlite and PostgreSQL.
CREATE INDEX "mcp_tools_search_idx" ON "mcp_tools" USING GIN ((setweight(to_tsvector('simple'::regconfig, "name"), 'A') || setweight(to_tsvector('simple'::regconfig, "provider"), 'B') || setweight(to_tsvector('simple'::regconfig, "description"), 'C')));

-- Tool names alone, for the first search tier (name matches outrank the rest without having to
-- recompute a weighted vector per matching row).
CREATE INDEX "mcp_tools_name_search_idx" ON "mcp_tools" USING GIN ((to_tsvector('simple'::regconfig, "name")));
