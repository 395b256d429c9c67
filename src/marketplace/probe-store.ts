import type { EndpointStatus, ProbeStore, ProbeTarget } from '../../probes/index.ts';
import { claimDueRows, claimRow, type LeasedTable, type PrismaClient } from '../db/index.ts';
import { newId } from '../kernel/index.ts';

interface TargetRow {
  id: string;
  url: string;
  provider: string;
  status: string;
  consecutive_failures: number;
  consecutive_successes: number;
  demand_score: number;
}

const ENDPOINTS: LeasedTable = {
  table: '"mcp_endpoints"',
  dueColumn: '"next_probe_at"',
  returning:
    'RETURNING t."id", t."url", t."provider", t."status", t."consecutive_failures", t."consecutive_successes", t."demand_score"',
};

function toTarget(row: TargetRow): ProbeTarget {
  return {
    id: row.id,
    url: row.url,
    provider: row.provider,
    status: row.status as EndpointStatus,
    consecutiveFailures: Number(row.consecutive_failures),
    consecutiveSuccesses: Number(row.consecutive_successes),
    demandScore: Number(row.demand_score),
  };
}

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * The prober's storage over the database. Leases live on the endpoint row (`lease_owner`,
 * `lease_until`) and are taken with `FOR UPDATE SKIP LOCKED`, so instances never wait on each
 * other and never probe the same endpoint at once; an expired lease (crashed owner) is free again.
 */
export function createProbeStore(prisma: PrismaClient): ProbeStore {
  return {
    async claimDue(owner, now, leaseMs, limit) {
      return (await claimDueRows<TargetRow>(prisma, ENDPOINTS, owner, now, leaseMs, limit)).map(toTarget);
    },
    async claimOne(id, owner, now, leaseMs) {
      // Waits out a short row lock (a demand update, another prober's claim) and then re-checks
      // the lease on the row as it is now; SKIP LOCKED would report "held by another prober" for
      // an endpoint nobody holds (seen in CI: a demand update during probeNow).
      const row = await claimRow<TargetRow>(prisma, ENDPOINTS, id, owner, now, leaseMs, true);
      return row ? toTarget(row) : undefined;
    },
    async recordProbe(owner, record) {
      const { outcome, health, endpointId } = record;
      const tools = outcome.ok
        ? outcome.tools.map((t) => ({
            id: newId('tool'),
            name: t.name,
            title: t.title,
            description: t.description,
            input_schema: t.inputSchema,
            output_schema: t.outputSchema,
            annotations: t.annotations,
            execution: t.execution,
            icons: t.icons,
            meta: t.meta,
            requires_agin: t.requiresAgin,
            caller_identity: t.callerIdentity,
          }))
        : [];
      // One statement (data-modifying CTEs) is atomic without an interactive transaction and
      // costs one round trip: record the run, drop vanished tools, upsert the rest, move the
      // health, release our lease (only ours: an expired lease may belong to someone else now).
      // The revisions and capabilities change only with an answer: a failed probe keeps the last seen.
      await prisma.$executeRawUnsafe(
        `WITH run AS (
           INSERT INTO "probe_runs" ("endpoint_id", "started_at", "ok", "latency_ms", "protocol_version", "server_info", "tool_count", "error")
           VALUES ($1, $2::timestamptz, $3::boolean, $4::int, $5, $6::jsonb, $7::int, $8) RETURNING 1
         ), gone AS (
           DELETE FROM "mcp_tools" WHERE $3::boolean AND "endpoint_id" = $1 AND "name" NOT IN (SELECT jsonb_array_elements_text($9::jsonb)) RETURNING 1
         ), upserted AS (
           INSERT INTO "mcp_tools" ("id", "endpoint_id", "provider", "name", "title", "description", "input_schema", "output_schema", "annotations", "execution", "icons", "meta", "requires_agin", "caller_identity", "updated_at")
           SELECT x."id", $1, (SELECT "provider" FROM "mcp_endpoints" WHERE "id" = $1), x."name", x."title", x."description", x."input_schema", x."output_schema", x."annotations", x."execution", x."icons", x."meta", x."requires_agin", x."caller_identity", now()
             FROM jsonb_to_recordset($10::jsonb) AS x("id" text, "name" text, "title" text, "description" text, "input_schema" jsonb, "output_schema" jsonb, "annotations" jsonb, "execution" jsonb, "icons" jsonb, "meta" jsonb, "requires_agin" boolean, "caller_identity" text)
           ON CONFLICT ("endpoint_id", "name") DO UPDATE SET
             "title" = EXCLUDED."title", "description" = EXCLUDED."description", "input_schema" = EXCLUDED."input_schema", "output_schema" = EXCLUDED."output_schema",
             "annotations" = EXCLUDED."annotations", "execution" = EXCLUDED."execution", "icons" = EXCLUDED."icons", "meta" = EXCLUDED."meta",
             "requires_agin" = EXCLUDED."requires_agin", "caller_identity" = EXCLUDED."caller_identity", "provider" = EXCLUDED."provider", "updated_at" = now()
           WHERE ("mcp_tools"."title", "mcp_tools"."description", "mcp_tools"."input_schema", "mcp_tools"."output_schema", "mcp_tools"."annotations", "mcp_tools"."execution", "mcp_tools"."icons", "mcp_tools"."meta", "mcp_tools"."requires_agin", "mcp_tools"."caller_identity", "mcp_tools"."provider")
             IS DISTINCT FROM (EXCLUDED."title", EXCLUDED."description", EXCLUDED."input_schema", EXCLUDED."output_schema", EXCLUDED."annotations", EXCLUDED."execution", EXCLUDED."icons", EXCLUDED."meta", EXCLUDED."requires_agin", EXCLUDED."caller_identity", EXCLUDED."provider")
           RETURNING 1
         )
         UPDATE "mcp_endpoints" SET
           "status" = $11, "consecutive_failures" = $12::int, "consecutive_successes" = $13::int, "demand_score" = $14::double precision,
           "last_probe_at" = $2::timestamptz, "last_probe_ok" = $3::boolean, "last_latency_ms" = $4::int, "last_error" = $8,
           "next_probe_at" = $15::timestamptz, "tool_count" = CASE WHEN $3::boolean THEN $7::int WHEN $11 = 'auth_required' THEN 0 ELSE "tool_count" END, "updated_at" = now(),
           "protocol_versions" = CASE WHEN $3::boolean THEN $17::jsonb ELSE "protocol_versions" END,
           "capabilities" = CASE WHEN $3::boolean THEN $18::jsonb ELSE "capabilities" END,
           "lease_owner" = CASE WHEN "lease_owner" = $16 THEN NULL ELSE "lease_owner" END,
           "lease_until" = CASE WHEN "lease_owner" = $16 THEN NULL ELSE "lease_until" END
         WHERE "id" = $1`,
        endpointId,
        iso(record.startedAt),
        outcome.ok,
        Math.max(0, Math.round(outcome.latencyMs)),
        outcome.protocolVersion,
        outcome.serverInfo === null ? null : JSON.stringify(outcome.serverInfo),
        outcome.tools.length,
        outcome.error,
        JSON.stringify(tools.map((t) => t.name)),
        JSON.stringify(tools),
        health.status,
        health.consecutiveFailures,
        health.consecutiveSuccesses,
        record.demandScore,
        iso(record.nextProbeAt),
        owner,
        JSON.stringify(outcome.revisions),
        outcome.capabilities === null ? null : JSON.stringify(outcome.capabilities),
      );
    },
    async deferProbe(owner, endpointId, nextProbeAt) {
      await prisma.$executeRawUnsafe(
        `UPDATE "mcp_endpoints" SET "next_probe_at" = $2::timestamptz,
           "lease_owner" = CASE WHEN "lease_owner" = $3 THEN NULL ELSE "lease_owner" END,
           "lease_until" = CASE WHEN "lease_owner" = $3 THEN NULL ELSE "lease_until" END
         WHERE "id" = $1`,
        endpointId,
        iso(nextProbeAt),
        owner,
      );
    },
    async addDemand(weights, soonest) {
      if (weights.size === 0) return;
      const rows = JSON.stringify([...weights].map(([id, w]) => ({ id, w })));
      await prisma.$executeRawUnsafe(
        `UPDATE "mcp_endpoints" e SET "demand_score" = e."demand_score" + d."w", "next_probe_at" = LEAST(e."next_probe_at", $2::timestamptz)
           FROM jsonb_to_recordset($1::jsonb) AS d("id" text, "w" double precision) WHERE e."id" = d."id"`,
        rows,
        iso(soonest),
      );
    },
  };
}
