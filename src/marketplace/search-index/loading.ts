/**
 * Loading the tool search index from the database: a full load, and catch-ups that re-read only
 * the endpoints whose `updated_at` moved. When to load is the index's choice (search-index.ts).
 */
import type { Database } from '../../db/index.ts';
import type { IndexedToolRow, ToolStore } from './store.ts';

type ToolRow = IndexedToolRow;

interface EndpointRow {
  id: string;
  status: string;
  updated_at: Date | string;
}

const ONLINE = new Set(['healthy', 'degraded']);

/** How far back each catch-up looks again, so a change committed late is not missed. */
const OVERLAP_MS = 2_000;

function groupByEndpoint(rows: ToolRow[]): Map<string, ToolRow[]> {
  const groups = new Map<string, ToolRow[]>();
  for (const row of rows) {
    const list = groups.get(row.endpoint_id);
    if (list) list.push(row);
    else groups.set(row.endpoint_id, [row]);
  }
  return groups;
}

const time = (value: Date | string) => (value instanceof Date ? value.getTime() : Date.parse(value));

/** Loads `store` from `db`: `fullLoad` first, `catchUp` after it. */
export function createToolLoader(
  db: Database,
  store: ToolStore,
): { fullLoad(): Promise<void>; catchUp(): Promise<void>; readonly loaded: boolean } {
  /** Every endpoint seen (online or not) with the `updated_at` applied. */
  const applied = new Map<string, number>();
  let watermark = -Infinity;
  let loaded = false;

  async function loadTools(endpointIds: string[] | undefined): Promise<ToolRow[]> {
    const select = `SELECT t."id", t."endpoint_id", t."provider", t."name", t."description" FROM "mcp_tools" t JOIN "mcp_endpoints" e ON e."id" = t."endpoint_id"
                     WHERE e."status" IN ('healthy', 'degraded')`;
    return endpointIds === undefined
      ? db.sql.query<ToolRow>(select)
      : db.sql.query<ToolRow>(`${select} AND t."endpoint_id" = ANY($1::text[])`, [endpointIds]);
  }

  async function fullLoad(): Promise<void> {
    const endpoints = await db.sql.query<EndpointRow>(`SELECT "id", "status", "updated_at" FROM "mcp_endpoints"`);
    const tools = await loadTools(undefined);
    store.clear();
    applied.clear();
    for (const [endpointId, rows] of groupByEndpoint(tools)) store.addEndpoint(endpointId, rows);
    let newest = -Infinity;
    for (const e of endpoints) {
      const t = time(e.updated_at);
      applied.set(e.id, t);
      newest = Math.max(newest, t);
    }
    watermark = newest;
    loaded = true;
  }

  async function catchUp(): Promise<void> {
    const [counted] = await db.sql.query<{ n: number }>(`SELECT count(*)::int AS n FROM "mcp_endpoints"`);
    const changed = await db.sql.query<EndpointRow>(
      `SELECT "id", "status", "updated_at" FROM "mcp_endpoints" WHERE "updated_at" > $1::timestamptz`,
      [new Date(Number.isFinite(watermark) ? watermark - OVERLAP_MS : 0).toISOString()],
    );
    const fresh = changed.filter((e) => applied.get(e.id) !== time(e.updated_at));
    const known = new Set(applied.keys());
    for (const e of fresh) known.add(e.id);
    // Endpoints were deleted: start over (deletions leave no `updated_at` to find).
    if (known.size !== Number(counted?.n ?? 0)) return fullLoad();
    if (fresh.length === 0) return;
    const online = fresh.filter((e) => ONLINE.has(e.status)).map((e) => e.id);
    const tools = groupByEndpoint(online.length > 0 ? await loadTools(online) : []);
    for (const e of fresh) {
      const rows = tools.get(e.id) ?? [];
      // A probe moves `updated_at` every time; re-index only tools that really changed.
      if (rows.length === 0 || !store.holds(e.id, rows)) {
        store.removeEndpoint(e.id);
        if (rows.length > 0) store.addEndpoint(e.id, rows);
      }
      const t = time(e.updated_at);
      applied.set(e.id, t);
      watermark = Math.max(watermark, t);
    }
  }

  return {
    fullLoad,
    catchUp,
    get loaded() {
      return loaded;
    },
  };
}
