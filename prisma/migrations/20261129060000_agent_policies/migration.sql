-- AlterTable: who may call what (issue 35): an agent's policy document, the account's default policy and
-- account-wide ceiling, and the per-AGIN limits a provider declares on its listing
ALTER TABLE "agents" ADD COLUMN "policy" JSONB;
ALTER TABLE "accounts" ADD COLUMN "agent_policy" JSONB;
ALTER TABLE "mcp_endpoints" ADD COLUMN "agin_limits" JSONB;
