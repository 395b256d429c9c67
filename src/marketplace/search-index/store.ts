/**
 * What the tool search index holds: each online tool as a doc with its rank key, the inverted
 * indexes (word → tools) per field, the exact-name map, and per endpoint what was filed where, so
 * an endpoint's tools can be added and removed as a unit when the database changes.
 */
import { createHash } from 'node:crypto';

import { exactName, searchWords } from './words.ts';

/** A tool as the index holds it, in its slot. */
export interface Doc {
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

/** Tools containing one word, as a set for membership and, once asked for, in rank order. */
export class Posting {
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

const FIELDS = ['name', 'provider', 'any'] as const;
export type Field = (typeof FIELDS)[number];

const digestOf = (rows: ToolRow[]) =>
  createHash('sha1')
    .update(JSON.stringify(rows.map((r) => [r.id, r.provider, r.name, r.description]).sort()))
    .digest('base64');

/** The index's data, shared by the loading (which fills it) and the ranking (which reads it). */
export interface ToolStore {
  /** Docs by slot; undefined where a slot is free. */
  readonly docs: (Doc | undefined)[];
  /** Word → word number. */
  readonly vocabulary: Map<string, number>;
  /** Postings per field and word number. */
  readonly postings: Record<Field, Posting[]>;
  /** Slots by exactName of the tool name: one, or several in rank order. */
  readonly exactSlots: Map<string, number | number[]>;
  /** Tools held. */
  readonly size: number;
  /** Files an endpoint's tools (the endpoint must not be held). */
  addEndpoint(endpointId: string, rows: ToolRow[]): void;
  /** Drops an endpoint's tools, if held. */
  removeEndpoint(endpointId: string): void;
  /** Whether `rows` are exactly the tools held for the endpoint. */
  holds(endpointId: string, rows: ToolRow[]): boolean;
  /** Empties the store (before a full load). */
  clear(): void;
}

/** Creates an empty store. */
export function createToolStore(): ToolStore {
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

  function wordNumber(word: string): number {
    let n = vocabulary.get(word);
    if (n === undefined) {
      n = vocabulary.size;
      vocabulary.set(word, n);
      for (const field of FIELDS) postings[field].push(new Posting());
    }
    return n;
  }

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

  return {
    docs,
    vocabulary,
    postings,
    exactSlots,
    get size() {
      return size;
    },
    addEndpoint,
    removeEndpoint,
    holds: (endpointId, rows) => byEndpoint.get(endpointId)?.digest === digestOf(rows),
    clear() {
      docs.length = 0;
      free.length = 0;
      size = 0;
      vocabulary.clear();
      for (const field of FIELDS) postings[field].length = 0;
      exactSlots.clear();
      byEndpoint.clear();
    },
  };
}
