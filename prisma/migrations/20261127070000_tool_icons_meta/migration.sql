-- AlterTable: MCP's icons and _meta of a tool, as its provider published them (null when it published none, or none Plaza keeps)
ALTER TABLE "mcp_tools" ADD COLUMN "icons" JSONB,
ADD COLUMN "meta" JSONB;
