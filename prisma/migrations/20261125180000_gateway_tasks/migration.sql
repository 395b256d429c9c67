-- CreateTable
CREATE TABLE "gateway_tasks" (
    "key" TEXT NOT NULL,
    "call_id" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "gateway_tasks_pkey" PRIMARY KEY ("key")
);

-- CreateIndex
CREATE INDEX "gateway_tasks_created_at_idx" ON "gateway_tasks"("created_at");
