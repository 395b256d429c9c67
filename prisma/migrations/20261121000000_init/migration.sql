-- CreateTable
CREATE TABLE "accounts" (
    "id" TEXT NOT NULL,
    "email" TEXT NOT NULL,
    "name" TEXT,
    "password_hash" TEXT,
    "status" TEXT NOT NULL DEFAULT 'active',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "accounts_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "api_keys" (
    "id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "name" TEXT,
    "prefix" TEXT NOT NULL,
    "hash" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "last_used_at" TIMESTAMPTZ(3),
    "revoked_at" TIMESTAMPTZ(3),

    CONSTRAINT "api_keys_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "agents" (
    "id" TEXT NOT NULL,
    "account_id" TEXT,
    "agin_id" TEXT NOT NULL,
    "agent_principal" TEXT NOT NULL,
    "display_name" TEXT NOT NULL,
    "owner_context" TEXT,
    "status" TEXT NOT NULL DEFAULT 'active',
    "public" BOOLEAN NOT NULL DEFAULT false,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "revoked_at" TIMESTAMPTZ(3),

    CONSTRAINT "agents_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "agent_credentials" (
    "id" TEXT NOT NULL,
    "agent_id" TEXT NOT NULL,
    "hash" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "revoked_at" TIMESTAMPTZ(3),

    CONSTRAINT "agent_credentials_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "mcp_endpoints" (
    "id" TEXT NOT NULL,
    "provider" TEXT NOT NULL,
    "url" TEXT NOT NULL,
    "registered_by" TEXT NOT NULL,
    "source" TEXT NOT NULL DEFAULT 'manual',
    "registry_name" TEXT,
    "agin_support" BOOLEAN NOT NULL DEFAULT false,
    "summary" TEXT NOT NULL DEFAULT '',
    "audience" TEXT,
    "required_credentials" JSONB NOT NULL DEFAULT '[]',
    "purpose" TEXT,
    "risk" TEXT,
    "status" TEXT NOT NULL DEFAULT 'registered',
    "tool_count" INTEGER NOT NULL DEFAULT 0,
    "consecutive_failures" INTEGER NOT NULL DEFAULT 0,
    "consecutive_successes" INTEGER NOT NULL DEFAULT 0,
    "demand_score" DOUBLE PRECISION NOT NULL DEFAULT 0,
    "last_probe_at" TIMESTAMPTZ(3),
    "next_probe_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "lease_owner" TEXT,
    "lease_until" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "mcp_endpoints_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "mcp_tools" (
    "id" TEXT NOT NULL,
    "endpoint_id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "description" TEXT NOT NULL DEFAULT '',
    "input_schema" JSONB NOT NULL DEFAULT '{}',
    "annotations" JSONB NOT NULL DEFAULT '{}',
    "requires_agin" BOOLEAN NOT NULL DEFAULT false,
    "caller_identity" TEXT,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "mcp_tools_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "probe_runs" (
    "id" BIGSERIAL NOT NULL,
    "endpoint_id" TEXT NOT NULL,
    "started_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "ok" BOOLEAN NOT NULL,
    "latency_ms" INTEGER NOT NULL,
    "protocol_version" TEXT,
    "server_info" JSONB,
    "tool_count" INTEGER NOT NULL DEFAULT 0,
    "error" TEXT,

    CONSTRAINT "probe_runs_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "receipts" (
    "seq" BIGSERIAL NOT NULL,
    "call_id" TEXT NOT NULL,
    "agin_id" TEXT NOT NULL,
    "agent_principal" TEXT NOT NULL,
    "account_id" TEXT,
    "tool" TEXT NOT NULL,
    "provider" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "outcome" TEXT NOT NULL,
    "latency_ms" INTEGER NOT NULL,
    "result_digest" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "prev_hash" TEXT,
    "leaf_hash" TEXT,

    CONSTRAINT "receipts_pkey" PRIMARY KEY ("seq")
);

-- CreateTable
CREATE TABLE "receipt_checkpoints" (
    "id" BIGSERIAL NOT NULL,
    "tree_size" BIGINT NOT NULL,
    "root_hash" TEXT NOT NULL,
    "chain_head" TEXT NOT NULL,
    "key_id" TEXT NOT NULL,
    "signature" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "receipt_checkpoints_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "package_sources" (
    "id" TEXT NOT NULL,
    "package_id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "version" TEXT NOT NULL,
    "summary" TEXT NOT NULL DEFAULT '',
    "vendor_name" TEXT NOT NULL,
    "download_uri" TEXT NOT NULL,
    "sha256" TEXT NOT NULL,
    "trust" TEXT NOT NULL,
    "account_id" TEXT,
    "status" TEXT NOT NULL DEFAULT 'registered',
    "stage" TEXT NOT NULL DEFAULT 'registered',
    "reason" TEXT,
    "findings" JSONB NOT NULL DEFAULT '[]',
    "live" BOOLEAN NOT NULL DEFAULT false,
    "next_check_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "lease_owner" TEXT,
    "lease_until" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "package_sources_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "package_source_events" (
    "id" BIGSERIAL NOT NULL,
    "source_id" TEXT NOT NULL,
    "at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "from_status" TEXT,
    "to_status" TEXT NOT NULL,
    "reason" TEXT,

    CONSTRAINT "package_source_events_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "leads" (
    "id" TEXT NOT NULL,
    "email" TEXT NOT NULL,
    "scenario" TEXT NOT NULL,
    "company" TEXT,
    "pain_point" TEXT,
    "current_tools" TEXT,
    "desired_automation" TEXT,
    "team_size" TEXT,
    "locale" TEXT NOT NULL DEFAULT 'en',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "leads_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "outbound_emails" (
    "id" TEXT NOT NULL,
    "to" TEXT NOT NULL,
    "subject" TEXT NOT NULL,
    "text" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'queued',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "next_attempt_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "last_error" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "sent_at" TIMESTAMPTZ(3),

    CONSTRAINT "outbound_emails_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "chat_usage" (
    "id" BIGSERIAL NOT NULL,
    "subject" TEXT NOT NULL,
    "subject_type" TEXT NOT NULL,
    "model" TEXT NOT NULL,
    "prompt_tokens" INTEGER NOT NULL,
    "completion_tokens" INTEGER NOT NULL,
    "total_tokens" INTEGER NOT NULL,
    "request_id" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "chat_usage_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "signing_keys" (
    "kid" TEXT NOT NULL,
    "purpose" TEXT NOT NULL,
    "public_jwk" JSONB NOT NULL,
    "private_jwk" JSONB NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "retired_at" TIMESTAMPTZ(3),

    CONSTRAINT "signing_keys_pkey" PRIMARY KEY ("kid")
);

-- CreateTable
CREATE TABLE "job_leases" (
    "name" TEXT NOT NULL,
    "owner" TEXT NOT NULL,
    "until" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "job_leases_pkey" PRIMARY KEY ("name")
);

-- CreateIndex
CREATE UNIQUE INDEX "accounts_email_key" ON "accounts"("email");

-- CreateIndex
CREATE UNIQUE INDEX "api_keys_prefix_key" ON "api_keys"("prefix");

-- CreateIndex
CREATE INDEX "api_keys_account_id_idx" ON "api_keys"("account_id");

-- CreateIndex
CREATE UNIQUE INDEX "agents_agin_id_key" ON "agents"("agin_id");

-- CreateIndex
CREATE UNIQUE INDEX "agents_agent_principal_key" ON "agents"("agent_principal");

-- CreateIndex
CREATE INDEX "agents_account_id_idx" ON "agents"("account_id");

-- CreateIndex
CREATE UNIQUE INDEX "agent_credentials_hash_key" ON "agent_credentials"("hash");

-- CreateIndex
CREATE INDEX "agent_credentials_agent_id_idx" ON "agent_credentials"("agent_id");

-- CreateIndex
CREATE UNIQUE INDEX "mcp_endpoints_url_key" ON "mcp_endpoints"("url");

-- CreateIndex
CREATE INDEX "mcp_endpoints_provider_idx" ON "mcp_endpoints"("provider");

-- CreateIndex
CREATE INDEX "mcp_endpoints_status_next_probe_at_idx" ON "mcp_endpoints"("status", "next_probe_at");

-- CreateIndex
CREATE INDEX "mcp_tools_name_idx" ON "mcp_tools"("name");

-- CreateIndex
CREATE UNIQUE INDEX "mcp_tools_endpoint_id_name_key" ON "mcp_tools"("endpoint_id", "name");

-- CreateIndex
CREATE INDEX "probe_runs_endpoint_id_started_at_idx" ON "probe_runs"("endpoint_id", "started_at");

-- CreateIndex
CREATE UNIQUE INDEX "receipts_call_id_key" ON "receipts"("call_id");

-- CreateIndex
CREATE INDEX "receipts_account_id_seq_idx" ON "receipts"("account_id", "seq");

-- CreateIndex
CREATE INDEX "receipts_agin_id_seq_idx" ON "receipts"("agin_id", "seq");

-- CreateIndex
CREATE UNIQUE INDEX "receipt_checkpoints_tree_size_key" ON "receipt_checkpoints"("tree_size");

-- CreateIndex
CREATE INDEX "package_sources_package_id_idx" ON "package_sources"("package_id");

-- CreateIndex
CREATE INDEX "package_sources_status_next_check_at_idx" ON "package_sources"("status", "next_check_at");

-- CreateIndex
CREATE INDEX "package_source_events_source_id_at_idx" ON "package_source_events"("source_id", "at");

-- CreateIndex
CREATE INDEX "leads_email_scenario_updated_at_idx" ON "leads"("email", "scenario", "updated_at");

-- CreateIndex
CREATE INDEX "outbound_emails_status_next_attempt_at_idx" ON "outbound_emails"("status", "next_attempt_at");

-- CreateIndex
CREATE INDEX "chat_usage_subject_created_at_idx" ON "chat_usage"("subject", "created_at");

-- CreateIndex
CREATE INDEX "signing_keys_purpose_created_at_idx" ON "signing_keys"("purpose", "created_at");

-- AddForeignKey
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "agents" ADD CONSTRAINT "agents_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "agent_credentials" ADD CONSTRAINT "agent_credentials_agent_id_fkey" FOREIGN KEY ("agent_id") REFERENCES "agents"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "mcp_tools" ADD CONSTRAINT "mcp_tools_endpoint_id_fkey" FOREIGN KEY ("endpoint_id") REFERENCES "mcp_endpoints"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "probe_runs" ADD CONSTRAINT "probe_runs_endpoint_id_fkey" FOREIGN KEY ("endpoint_id") REFERENCES "mcp_endpoints"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "package_source_events" ADD CONSTRAINT "package_source_events_source_id_fkey" FOREIGN KEY ("source_id") REFERENCES "package_sources"("id") ON DELETE CASCADE ON UPDATE CASCADE;
