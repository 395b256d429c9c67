/**
 * The in-memory tool search index, the entry of its module: when it looks at the database and what
 * a search answers meanwhile. The parts: search-index/words.ts (what a word is), store.ts (what is
 * held), loading.ts (reading the database), query.ts (ranking).
 */
import type { Database } from '../db/index.ts';
import { createToolLoader } from './search-index/loading.ts';
import { createToolRanking, type RankedIds } from './search-index/query.ts';
import { createToolStore } from './search-index/store.ts';

export { type RankedIds } from './search-index/query.ts';
export { type IndexedToolRow } from './search-index/store.ts';
export { exactName, searchWords } from './search-index/words.ts';

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
  const store = createToolStore();
  const rank = createToolRanking(store);
  const loader = createToolLoader(db, store);
  let stale = true;
  let lastSync = -Infinity;
  let syncing: Promise<void> | undefined;

  function sync(): Promise<void> {
    if (syncing) return syncing;
    stale = false;
    const started = now();
    syncing = (loader.loaded ? loader.catchUp() : loader.fullLoad())
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

  return {
    async search(words, options) {
      // Until the first load has finished the caller answers from SQL. A change made in this
      // process is seen by the next search. Changes by other instances: a search more than
      // maxAgeMs after the last look starts a catch-up and answers from the current view; one
      // after a long quiet spell (10 × maxAgeMs) waits for it. A database that cannot be read
      // leaves the index as it was.
      if (!loader.loaded) {
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
      return rank(words, options);
    },
    markStale() {
      stale = true;
    },
    refresh: () => sync(),
    get size() {
      return store.size;
    },
  };
}
