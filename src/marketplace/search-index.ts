import { createHash } from 'node:crypto';

import type { Database } from '../db/index.ts';

/** Words of a text as the search sees them: NFKC, lower case, runs of letters and digits. */
export function searchWords(text: string): string[] {
  return (
    text
      .normalize('NFKC')
      .toLowerCase()
      .match(/[\p{L}\p{N}]+/gu) ?? []
  );
}

/**
 * A tool name as an exact search compares it: its words, space-separated (`Get_Weather` and
 * `get-weather` are both `get weather`). A search whose words, as given, are exactly these finds
 * the tool first.
 */
export function exactName(name: string): string {
  return searchWords(name).join(' ');
}

/**
 * Where a ranked search lands: tier A (every word in the tool name; names that are exactly the
 * search first), then tier B (the rest).
 */
export interface RankedIds {
  /** Tier A in rank order, at most `need` ids; shorter only when that is all of it. */
  tierA: string[];
  /** Tier B in rank order (provider matches first), at most `need` ids. */
  tierB: string[];
}

/** In-memory ranked search over the online tools, kept in step with the database. */
export interface ToolSearchIndex {
  /**
   * Ranked ids of online tools matching every word of `words` (whole words, or prefixes when
   * `prefix`), at most `need` per tier; undefined until the first load has finished.
   */
  search(
    words: string[],
    options: { prefix: boolean; provider?: string | undefined; need: number },
  ): Promise<RankedIds | undefined>;
  /** Something changed in this process: the next search catches up first. */
  markStale(): void;
  /** Loads changes now (tests, and the first load at start). */
  refresh(): Promise<void>;
  /** Tools held (for metrics and tests). */
  readonly size: number;
}

interface Doc {
  id: string;
  endpointId: string;
  provider: string;
  /** provider \0 name \0 id: the rank order within a tier, compared as one string. */
  key: string;
}

/** The columns of a tool the index reads (the search words and the rank key). */
export interface IndexedToolRow {
  id: string;
  endpoint_id: string;
  provider: string;
  name: string;
  description: string;
}

type ToolRow = IndexedToolRow;

interface EndpointRow {
  id: string;
  status: string;
  updated_at: Date | string;
}

/** Tools containing one word, as a set for membership and, once asked for, in rank order. */
class Posting {
  readonly slots = new Set<number>();
  private ordered: number[] | undefined;

  /** `transient`: a one-off union for one search, never kept in order. */
  readonly transient: boolean;

  constructor(transient = false) {
    this.transient = transient;
  }

  add(slot: number): void {
    this.slots.add(slot);
    this.ordered = undefined;
  }

  delete(slot: number): void {
    if (this.slots.delete(slot)) this.ordered = undefined;
  }

  /** Slots sorted by their doc's key; sorted again only after the posting changed. */
  inOrder(docs: (Doc | undefined)[]): number[] {
    return (this.ordered ??= sortByKey([...this.slots], docs));
  }
}

function sortByKey(slots: number[], docs: (Doc | undefined)[]): number[] {
  return slots.sort((a, b) => {
    const ka = docs[a]!.key;
    const kb = docs[b]!.key;
    return ka < kb ? -1 : ka > kb ? 1 : 0;
  });
}

const EMPTY = new Posting();

const FIELDS = ['name', 'provider', 'any'] as const;
type Field = (typeof FIELDS)[number];

const ONLINE = new Set(['healthy', 'degraded']);

/** How far back each catch-up looks again, so a change committed late is not missed. */
const OVERLAP_MS = 2_000;

/**
 * Creates the tool search index (docs/decisions/marketplace-and-probes.md, "Tool search in memory").
 *
 * Every online tool is held as its rank key with three inverted indexes (word → tools): name
 * words, provider words, and all words of name, provider and description. Each posting keeps its
 * tools in rank order once asked, so a search walks the shortest list of each tier in order and
 * stops after `need` hits: cost grows with the page asked for, not with how common the word is.
 * The database stays the truth: the index catches up with endpoints whose `updated_at` moved
 * (tools re-read, and re-indexed only when they actually changed), at once after a change made in
 * this process, within `maxAgeMs` otherwise, and reloads whole when endpoints disappeared.
 */
export function createToolSearchIndex(
  db: Database,
  options: { maxAgeMs?: number; now?: () => number } = {},
): ToolSearchIndex {
  const maxAgeMs = options.maxAgeMs ?? 1_000;
  const now = options.now ?? Date.now;
  const docs: (Doc | undefined)[] = [];
  const free: number[] = [];
  let size = 0;
  // Words are numbered once (`vocabulary`); postings are per field and word number.
  const vocabulary = new Map<string, number>();
  const postings: Record<Field, Posting[]> = { name: [], provider: [], any: [] };
  /**
   * Tools by their name's words (exactName), for exact matches: one slot, or several in rank
   * order. A plain number for the usual single tool keeps this to a map entry per name.
   */
  const exactSlots = new Map<string, number | number[]>();
  /** Per endpoint: its slots, where each slot was filed (word number × 3 + field), a digest of its tools. */
  const byEndpoint = new Map<string, { slots: number[]; filed: number[][]; digest: string }>();
  /** Every endpoint seen (online or not) with the `updated_at` applied. */
  const applied = new Map<string, number>();
  let watermark = -Infinity;
  let loaded = false;
  let stale = true;
  let lastSync = -Infinity;
  let syncing: Promise<void> | undefined;

  function wordNumber(word: string): number {
    let n = vocabulary.get(word);
    if (n === undefined) {
      n = vocabulary.size;
      vocabulary.set(word, n);
      for (const field of FIELDS) postings[field].push(new Posting());
    }
    return n;
  }

  const digestOf = (rows: ToolRow[]) =>
    createHash('sha1')
      .update(JSON.stringify(rows.map((r) => [r.id, r.provider, r.name, r.description]).sort()))
      .digest('base64');

  function addEndpoint(endpointId: string, rows: ToolRow[]): void {
    const entry = { slots: [] as number[], filed: [] as number[][], digest: digestOf(rows) };
    for (const row of rows) {
      const slot = free.pop() ?? docs.length;
      docs[slot] = {
        id: row.id,
        endpointId,
        provider: row.provider,
        key: `${row.provider}\u0000${row.name}\u0000${row.id}`,
      };
      size++;
      fileExact(exactName(row.name), slot);
      const name = new Set(searchWords(row.name).map(wordNumber));
      const provider = new Set(searchWords(row.provider).map(wordNumber));
      const any = new Set([...name, ...provider, ...searchWords(row.description).map(wordNumber)]);
      const filed: number[] = [];
      for (const [f, numbers] of [name, provider, any].entries()) {
        for (const n of numbers) {
          postings[FIELDS[f]!][n]!.add(slot);
          filed.push(n * 3 + f);
        }
      }
      entry.slots.push(slot);
      entry.filed.push(filed);
    }
    byEndpoint.set(endpointId, entry);
  }

  function fileExact(exact: string, slot: number): void {
    const held = exactSlots.get(exact);
    if (held === undefined) return void exactSlots.set(exact, slot);
    const list = typeof held === 'number' ? [held] : held;
    const key = docs[slot]!.key;
    let lo = 0;
    for (let hi = list.length; lo < hi;) {
      const mid = (lo + hi) >>> 1;
      if (docs[list[mid]!]!.key < key) lo = mid + 1;
      else hi = mid;
    }
    list.splice(lo, 0, slot);
    exactSlots.set(exact, list);
  }

  function unfileExact(exact: string, slot: number): void {
    const held = exactSlots.get(exact);
    if (held === slot) exactSlots.delete(exact);
    else if (Array.isArray(held)) {
      const at = held.indexOf(slot);
      if (at !== -1) held.splice(at, 1);
      if (held.length === 1) exactSlots.set(exact, held[0]!);
    }
  }

  function removeEndpoint(endpointId: string): void {
    const entry = byEndpoint.get(endpointId);
    if (!entry) return;
    for (const [i, slot] of entry.slots.entries()) {
      // Emptied words keep their number: the vocabulary only grows until the next full load.
      for (const code of entry.filed[i]!) postings[FIELDS[code % 3]!][Math.floor(code / 3)]!.delete(slot);
      unfileExact(exactName(docs[slot]!.key.split('\u0000')[1]!), slot);
      docs[slot] = undefined;
      free.push(slot);
      size--;
    }
    byEndpoint.delete(endpointId);
  }

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
    docs.length = 0;
    free.length = 0;
    size = 0;
    vocabulary.clear();
    for (const field of FIELDS) postings[field].length = 0;
    exactSlots.clear();
    byEndpoint.clear();
    applied.clear();
    for (const [endpointId, rows] of groupByEndpoint(tools)) addEndpoint(endpointId, rows);
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
      if (rows.length === 0 || byEndpoint.get(e.id)?.digest !== digestOf(rows)) {
        removeEndpoint(e.id);
        if (rows.length > 0) addEndpoint(e.id, rows);
      }
      const t = time(e.updated_at);
      applied.set(e.id, t);
      watermark = Math.max(watermark, t);
    }
  }

  function sync(): Promise<void> {
    if (syncing) return syncing;
    stale = false;
    const started = now();
    syncing = (loaded ? catchUp() : fullLoad())
      .then(() => {
        lastSync = started;
      })
      .catch((error: unknown) => {
        stale = true;
        throw error;
      })
      .finally(() => {
        syncing = undefined;
      });
    return syncing;
  }

  /** Word numbers a search word stands for: itself, or (prefix) every known word it starts. */
  function expand(word: string, prefix: boolean): number[] {
    if (!prefix) {
      const n = vocabulary.get(word);
      return n === undefined ? [] : [n];
    }
    const found: number[] = [];
    for (const [w, n] of vocabulary) if (w.startsWith(word)) found.push(n);
    return found;
  }

  /** The tools of `field` containing any of `numbers`: one posting, or a one-off union (prefixes). */
  function posting(field: Field, numbers: number[]): Posting {
    if (numbers.length === 0) return EMPTY;
    if (numbers.length === 1) return postings[field][numbers[0]!]!;
    const union = new Posting(true);
    for (const n of numbers) for (const slot of postings[field][n]!.slots) union.slots.add(slot);
    return union;
  }

  /**
   * Up to `need` tools, in rank order, that are in every one of `lists` and pass `accept`: walks
   * the shortest list in rank order and stops at `need`, or — when that list is a one-off union
   * not worth sorting — scans it and keeps the best `need`.
   */
  function walk(lists: Posting[], need: number, accept: (slot: number, doc: Doc) => boolean): Doc[] {
    if (need <= 0 || lists.some((p) => p.slots.size === 0)) return [];
    const [shortest, ...rest] = [...lists].sort((a, b) => a.slots.size - b.slots.size);
    const matches = (slot: number) => rest.every((p) => p.slots.has(slot)) && accept(slot, docs[slot]!);
    if (shortest!.transient) {
      const kept: Doc[] = [];
      for (const slot of shortest!.slots) {
        if (!matches(slot)) continue;
        const doc = docs[slot]!;
        if (kept.length === need && doc.key >= kept[need - 1]!.key) continue;
        let lo = 0;
        for (let hi = kept.length; lo < hi;) {
          const mid = (lo + hi) >>> 1;
          if (kept[mid]!.key < doc.key) lo = mid + 1;
          else hi = mid;
        }
        kept.splice(lo, 0, doc);
        if (kept.length > need) kept.pop();
      }
      return kept;
    }
    const found: Doc[] = [];
    for (const slot of shortest!.inOrder(docs)) {
      if (!matches(slot)) continue;
      found.push(docs[slot]!);
      if (found.length === need) break;
    }
    return found;
  }

  return {
    async search(words, { prefix, provider, need }) {
      // Until the first load has finished the caller answers from SQL. A change made in this
      // process is seen by the next search. Changes by other instances: a search more than
      // maxAgeMs after the last look starts a catch-up and answers from the current view; one
      // after a long quiet spell (10 × maxAgeMs) waits for it. A database that cannot be read
      // leaves the index as it was.
      if (!loaded) {
        sync().catch(() => undefined);
        return undefined;
      }
      // (At least, not more than: with maxAgeMs 0 every search sees the database, also one made
      // in the same millisecond as the last look.)
      for (let round = 0; round < 2 && (stale || now() - lastSync >= maxAgeMs * 10); round++) {
        try {
          await sync();
        } catch {
          break;
        }
      }
      if (now() - lastSync >= maxAgeMs) sync().catch(() => undefined);
      if (words.length === 0) return { tierA: [], tierB: [] };
      const expanded = words.map((w) => expand(w, prefix));
      const lists = (field: Field) => expanded.map((numbers) => posting(field, numbers));
      const name = lists('name');
      const byProvider = lists('provider');
      const ofProvider = (doc: Doc) => provider === undefined || doc.provider === provider;
      const inAll = (field: Posting[], slot: number) => field.every((p) => p.slots.has(slot));
      // Tier A: every word in the name, names that are exactly the search first. Tier B: the
      // rest, whole provider matches first.
      const held = exactSlots.get(words.join(' '));
      const exact = new Set(held === undefined ? [] : typeof held === 'number' ? [held] : held);
      const exactA = [...exact]
        .map((slot) => docs[slot]!)
        .filter(ofProvider)
        .slice(0, need);
      const tierA = [
        ...exactA,
        ...walk(name, need - exactA.length, (slot, doc) => ofProvider(doc) && !exact.has(slot)),
      ];
      const providerMatches = walk(byProvider, need, (slot, doc) => ofProvider(doc) && !inAll(name, slot));
      const others = walk(
        lists('any'),
        need - providerMatches.length,
        (slot, doc) => ofProvider(doc) && !inAll(name, slot) && !inAll(byProvider, slot),
      );
      return { tierA: tierA.map((d) => d.id), tierB: [...providerMatches, ...others].map((d) => d.id) };
    },
    markStale() {
      stale = true;
    },
    refresh: () => sync(),
    get size() {
      return size;
    },
  };
}
