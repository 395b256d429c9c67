-- CreateTable: the slug of a removed listing stays bound to its URL (the gateway routes by slug)
CREATE TABLE "retired_providers" (
    "provider" TEXT NOT NULL,
    "url" TEXT NOT NULL,
    "account_id" TEXT,
    "retired_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "retired_providers_pkey" PRIMARY KEY ("provider")
);

-- CreateIndex
CREATE INDEX "retired_providers_account_id_idx" ON "retired_providers"("account_id");

-- AddForeignKey: an account that goes leaves its retired slugs to anonymous listings of the same URL, as it leaves its listings anonymous
ALTER TABLE "retired_providers" ADD CONSTRAINT "retired_providers_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE SET NULL ON UPDATE CASCADE;
