-- AlterTable: MCP's title, outputSchema and execution of a tool, as its provider published them (null when it published none)
ALTER TABLE "mcp_tools" ADD COLUMN "title" TEXT,
ADD COLUMN "output_schema" JSONB,
ADD COLUMN "execution" JSONB;
