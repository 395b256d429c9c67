import type { ToolIcon } from '../../probes/index.ts';
import type { Database } from '../db/index.ts';
import { decodeCursor, encodeCursor } from './cursor.ts';
import { type IndexedToolRow, searchWords, type ToolSearchIndex } from './search-index.ts';
import type { Page, Tool } from './types.ts';

/** The exact expressions of the "mcp_tools_search_idx" and "mcp_tools_name_search_idx" GIN indexes. */
const VECTOR = `(setweight(to_tsvector('simple'::regconfig, t."name"), 'A') || setweight(to_tsvector('simple'::regconfig, t."provider"), 'B') || setweight(to_tsvector('simple'::regconfig, t."description"), 'C'))`;

const NAME_VECTOR = `to_tsvector('simple'::regconfig, t."name")`;

const ONLINE = `e."status" IN ('healthy', 'degraded')`;

const COLUMNS = `t."id", t."endpoint_id", t."provider", t."name", t."title", t."description", t."input_schema", t."output_schema", t."annotations", t."execution", t."icons", t."meta", t."requires_agin", t."caller_identity", e."status"`;

/** Search results deeper than this are not paged (ask a narrower question). */
export const MAX_SEARCH_OFFSET = 1_000;

/**
 * Matches ranked per tier at most. A broader search ranks the first this-many matches in index
 * order, so its cost stays bounded however common the word (docs/decisions/marketplace-and-probes.md,
 * "Tool search: tiers").
 */
export const SEARCH_CANDIDATES = 2_000;

interface ToolRow extends IndexedToolRow {
  title: string | null;
  input_schema: unknown;
  output_schema: unknown;
  annotations: unknown;
  execution: unknown;
  icons: unknown;
  meta: unknown;
  requires_agin: boolean;
  caller_identity: string | null;
  status: string;
}

/**
 * Words of a search as a tsquery of whole words (`get & weather`), or of prefixes
 * (`weath:* & forecast:*`) when `prefix` is set; empty when the search has no words.
 */
export function toTsQuery(q: string, prefix = false): string {
  return queryWords(q)
    .map((w) => `${w}${prefix ? ':*' : ''}`)
    .join(' & ');
}

/** The words of a search that count: at most 8 distinct, each cut to 64 characters. */
function queryWords(q: string): string[] {
  return [...new Set(searchWords(q).map((w) => w.slice(0, 64)))].slice(0, 8);
}

function toTool(row: ToolRow): Tool {
  const object = (value: unknown) =>
    value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
  return {
    id: row.id,
    endpointId: row.endpoint_id,
    provider: row.provider,
    name: row.name,
    title: row.title,
    description: row.description,
    inputSchema: object(row.input_schema),
    outputSchema: row.output_schema === null ? null : object(row.output_schema),
    annotations: object(row.annotations),
    execution: row.execution === null ? null : object(row.execution),
    icons: Array.isArray(row.icons) ? (row.icons as ToolIcon[]) : null,
    meta: row.meta === null ? null : object(row.meta),
    requiresAgin: row.requires_agin,
    callerIdentity: row.caller_identity,
    health: row.status === 'degraded' ? 'degraded' : 'healthy',
  };
}

/** Reads online tools (endpoint healthy or degraded). */
export interface ToolRepository {
  /**
   * Online tools. With `q`: ranked full-text search over name (highest weight), provider and
   * description, ties broken by provider, name, id. Without: ordered by provider, name, id.
   */
  search(options: {
    q?: string | undefined;
    provider?: string | undefined;
    limit: number;
    cursor?: string | undefined;
  }): Promise<Page<Tool>>;
  countOnline(): Promise<number>;
}

/**
 * Creates the tool repository. Raw SQL because Prisma has no full-text search on PostgreSQL.
 *
 * Ranking is in tiers, each served by its own GIN index: (A) every search word is in the tool
 * name, names that are exactly the search first, then by provider, name, id; (B) the words are spread over name, provider and
 * description, provider matches first. Tiers avoid `ts_rank`, which recomputes the weighted
 * vector of every matching row (measured ~100 ms for a common word over 100,000 tools). Whole
 * words first (their statistics let the planner choose well); prefixes only when whole words
 * find nothing. The cursor holds the tier, the offset within it and the mode.
 */
export function createToolRepository(db: Pick<Database, 'prisma' | 'sql'>, index?: ToolSearchIndex): ToolRepository {
  const { prisma } = db;
  async function tier(
    which: 'A' | 'B',
    params: unknown[],
    where: string[],
    limit: number,
    offset: number,
    exact: string,
  ): Promise<ToolRow[]> {
    const p = [...params, ...(which === 'A' ? [exact] : []), limit, offset];
    const query = `to_tsquery('simple'::regconfig, $${params.length})`;
    // Conditions on the tool alone narrow the candidates; the endpoint's status is checked after.
    const own = where.filter((w) => w.startsWith('t.'));
    const indexed = which === 'A' ? `${NAME_VECTOR} @@ ${query}` : `${VECTOR} @@ ${query}`;
    // A name that is exactly the search's words (exactName: separators folded) comes first.
    const order =
      which === 'A'
        ? `(trim(regexp_replace(lower(m."name"), '[^[:alnum:]]+', ' ', 'g')) = $${params.length + 1}) DESC, m."provider", m."name", m."id"`
        : `(to_tsvector('simple'::regconfig, m."provider") @@ ${query}) DESC, m."provider", m."name", m."id"`;
    // Three steps, each materialised so the planner cannot fall back to walking the whole table:
    // matching ids from the GIN index (bounded), the ordered page among online endpoints, then
    // the full rows of that page only.
    return prisma.$queryRawUnsafe<ToolRow[]>(
      `WITH m AS MATERIALIZED (
         SELECT t."id", t."provider", t."name", t."endpoint_id" FROM "mcp_tools" t
          WHERE ${[...own, indexed].join(' AND ')} LIMIT ${SEARCH_CANDIDATES}
       ), page AS MATERIALIZED (
         SELECT m."id", row_number() OVER (ORDER BY ${order}) AS rn FROM m JOIN "mcp_endpoints" e ON e."id" = m."endpoint_id"
          WHERE ${ONLINE}${which === 'B' ? ` AND NOT (to_tsvector('simple'::regconfig, m."name") @@ ${query})` : ''}
          ORDER BY ${order} LIMIT $${p.length - 1} OFFSET $${p.length}
       )
       SELECT ${COLUMNS} FROM page JOIN "mcp_tools" t ON t."id" = page."id" JOIN "mcp_endpoints" e ON e."id" = t."endpoint_id"
        ORDER BY page.rn`,
      ...p,
    );
  }

  /** Full rows of online tools by id, in the order given; ids gone offline meanwhile are dropped. */
  async function rowsById(ids: string[]): Promise<ToolRow[]> {
    if (ids.length === 0) return [];
    // The driver directly: this is the hot path of every search, and Prisma's raw query adds ~1 ms.
    const rows = await db.sql.query<ToolRow>(
      `SELECT ${COLUMNS} FROM "mcp_tools" t JOIN "mcp_endpoints" e ON e."id" = t."endpoint_id" WHERE t."id" = ANY($1::text[]) AND ${ONLINE}`,
      [ids],
    );
    const byId = new Map(rows.map((r) => [r.id, r]));
    return ids.flatMap((id) => byId.get(id) ?? []);
  }

  /**
   * One page from the in-memory index: the same tiers and cursors as the SQL search, then the
   * page's rows by id. Undefined while the index has not loaded yet.
   */
  async function searchIndexed(
    search: ToolSearchIndex,
    q: string,
    provider: string | undefined,
    limit: number,
    position: { tier: 'A' | 'B'; offset: number; mode: 0 | 1 },
  ): Promise<Page<Tool> | undefined> {
    const words = queryWords(q);
    const prefix = position.mode === 1;
    const need = position.offset + limit + 1;
    const ranked = await search.search(words, { prefix, provider, need });
    if (!ranked) return undefined;
    const { tierA, tierB } = ranked;
    const list = position.tier === 'A' ? [...tierA.slice(position.offset), ...tierB] : tierB.slice(position.offset);
    // A few spare ids cover tools that went offline since the index last looked.
    const rows = await rowsById(list.slice(0, limit + 1 + 4));
    if (rows.length < Math.min(list.length, limit + 1 + 4)) search.markStale();
    const items = rows.slice(0, limit).map(toTool);
    let next: [string, number] | null = null;
    if (rows.length > limit || list.length > limit + 1 + 4) {
      // Tier A holds `need` ids unless that is all of it, so its length is exact below `need`.
      const consumed = position.offset + limit;
      if (position.tier === 'A' && consumed < tierA.length)
        next = consumed <= MAX_SEARCH_OFFSET ? ['A', consumed] : null;
      else {
        const inB = position.tier === 'A' ? consumed - tierA.length : consumed;
        next = inB <= MAX_SEARCH_OFFSET ? ['B', inB] : null;
      }
    }
    return { items, nextCursor: next ? encodeCursor([...next, position.mode]) : null };
  }

  async function searchTiers(
    q: string,
    baseParams: unknown[],
    where: string[],
    limit: number,
    cursor: string | undefined,
    provider?: string,
  ): Promise<Page<Tool>> {
    const [cursorTier, cursorOffset, mode] = cursor === undefined ? ['A', 0, 0] : decodeCursor(cursor, 3);
    const offset = Number(cursorOffset);
    if (
      (cursorTier !== 'A' && cursorTier !== 'B') ||
      (mode !== 0 && mode !== 1) ||
      !Number.isInteger(offset) ||
      offset < 0 ||
      offset > MAX_SEARCH_OFFSET
    ) {
      return { items: [], nextCursor: null };
    }
    if (index) {
      const page = await searchIndexed(index, q, provider, limit, { tier: cursorTier, offset, mode });
      if (page) return page;
    }
    const params = [...baseParams, toTsQuery(q, mode === 1)];
    const exact = queryWords(q).join(' ');
    const rows: ToolRow[] = [];
    let next: [string, number] | null = null;
    if (cursorTier === 'A') {
      const a = await tier('A', params, where, limit + 1, offset, exact);
      rows.push(...a.slice(0, limit));
      if (a.length > limit) next = offset + limit <= MAX_SEARCH_OFFSET ? ['A', offset + limit] : null;
      else {
        const room = limit - rows.length;
        const b = await tier('B', params, where, room + 1, 0, exact);
        rows.push(...b.slice(0, room));
        if (b.length > room) next = ['B', room];
      }
    } else {
      const b = await tier('B', params, where, limit + 1, offset, exact);
      rows.push(...b.slice(0, limit));
      if (b.length > limit && offset + limit <= MAX_SEARCH_OFFSET) next = ['B', offset + limit];
    }
    return { items: rows.map(toTool), nextCursor: next ? encodeCursor([...next, mode]) : null };
  }

  return {
    async search({ q, provider, limit, cursor }) {
      const params: unknown[] = [];
      const where = [ONLINE];
      if (provider !== undefined) {
        params.push(provider);
        where.push(`t."provider" = $${params.length}`);
      }
      if (q !== undefined && q.trim() !== '') {
        if (toTsQuery(q) === '') return { items: [], nextCursor: null };
        if (cursor !== undefined) return searchTiers(q, params, where, limit, cursor, provider);
        const whole = await searchTiers(q, params, where, limit, undefined, provider);
        // Nothing for whole words: try them as prefixes ("weath" finds "weather").
        return whole.items.length > 0
          ? whole
          : searchTiers(q, params, where, limit, encodeCursor(['A', 0, 1]), provider);
      }
      if (cursor !== undefined) {
        const [p, n, id] = decodeCursor(cursor, 3).map(String);
        params.push(p, n, id);
        where.push(
          `(t."provider", t."name", t."id") > ($${params.length - 2}, $${params.length - 1}, $${params.length})`,
        );
      }
      params.push(limit + 1);
      const rows = await prisma.$queryRawUnsafe<ToolRow[]>(
        `SELECT ${COLUMNS}
           FROM "mcp_tools" t JOIN "mcp_endpoints" e ON e."id" = t."endpoint_id"
          WHERE ${where.join(' AND ')}
          ORDER BY t."provider", t."name", t."id"
          LIMIT $${params.length}`,
        ...params,
      );
      const items = rows.slice(0, limit).map(toTool);
      const last = items.at(-1);
      return {
        items,
        nextCursor: rows.length > limit && last ? encodeCursor([last.provider, last.name, last.id]) : null,
      };
    },
    async countOnline() {
      const rows = await prisma.$queryRawUnsafe<{ n: number | bigint }[]>(
        `SELECT count(*)::int AS n FROM "mcp_tools" t JOIN "mcp_endpoints" e ON e."id" = t."endpoint_id" WHERE ${ONLINE}`,
      );
      return Number(rows[0]?.n ?? 0);
    },
  };
}
