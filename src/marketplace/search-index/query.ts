/**
 * Ranking a search over the tool search index: search words to postings, the walk that finds the
 * best `need` tools in every posting, and the two tiers. The hot path of tool search (see
 * bench/tool-search.ts): it reads the store's containers directly, with no copies.
 */
import { type Doc, type Field, Posting, type ToolStore } from './store.ts';

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

const EMPTY = new Posting();

/** Ranks searches over `store` (taken as they are: loading and freshness are the caller's). */
export function createToolRanking(
  store: ToolStore,
): (words: string[], options: { prefix: boolean; provider?: string | undefined; need: number }) => RankedIds {
  const { docs, vocabulary, postings, exactSlots } = store;

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

  return (words, { prefix, provider, need }) => {
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
    const tierA = [...exactA, ...walk(name, need - exactA.length, (slot, doc) => ofProvider(doc) && !exact.has(slot))];
    const providerMatches = walk(byProvider, need, (slot, doc) => ofProvider(doc) && !inAll(name, slot));
    const others = walk(
      lists('any'),
      need - providerMatches.length,
      (slot, doc) => ofProvider(doc) && !inAll(name, slot) && !inAll(byProvider, slot),
    );
    return { tierA: tierA.map((d) => d.id), tierB: [...providerMatches, ...others].map((d) => d.id) };
  };
}
