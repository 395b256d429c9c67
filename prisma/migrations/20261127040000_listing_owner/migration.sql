-- AlterTable: the account that owns a listing made with its API key (null: anonymous or discovered)
ALTER TABLE "mcp_endpoints" ADD COLUMN "account_id" TEXT;

-- CreateIndex
CREATE INDEX "mcp_endpoints_account_id_idx" ON "mcp_endpoints"("account_id");

-- AddForeignKey: an account that goes leaves its listings anonymous, not gone from the catalog
ALTER TABLE "mcp_endpoints" ADD CONSTRAINT "mcp_endpoints_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE SET NULL ON UPDATE CASCADE;
