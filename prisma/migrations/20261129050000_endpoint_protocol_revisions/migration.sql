-- AlterTable: the MCP revisions an endpoint offers (newest first) and its capabilities, as its last answering probe saw them
ALTER TABLE "mcp_endpoints" ADD COLUMN "protocol_versions" JSONB NOT NULL DEFAULT '[]',
ADD COLUMN "capabilities" JSONB;
