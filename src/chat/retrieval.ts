import type { KnowledgeDoc } from './knowledge.ts';

/** A retrieved document with its best sentences. */
export interface Hit {
  doc: KnowledgeDoc;
  score: number;
  excerpt: string;
}

const CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u;
// Chinese function characters: a bigram holding one ("的方" in "的方式") matches by accident.
const CJK_STOP = new Set([...'的了是我你他她它们吗呢吧么怎在有和与及或这那个一也都就把被对为从到给让']);
const STOP = new Set(
  'a an and are as at be but by can do does for from how i in is it me my of on or please tell the to what when where which who why with you your about plaza'.split(
    ' ',
  ),
);

/**
 * Search terms of a text: lower-cased Latin words (minus stop words, light plural stripping) and,
 * for CJK runs, every character bigram (so 软件包 matches 软件 and 件包).
 */
export function terms(text: string): string[] {
  const out: string[] = [];
  for (const run of text.toLowerCase().match(/[\p{L}\p{N}_-]+/gu) ?? []) {
    if (CJK.test(run)) {
      const chars = [...run].filter((c) => CJK.test(c));
      if (chars.length === 1 && !CJK_STOP.has(chars[0]!)) out.push(chars[0]!);
      for (let i = 0; i + 1 < chars.length; i++) {
        if (!CJK_STOP.has(chars[i]!) && !CJK_STOP.has(chars[i + 1]!)) out.push(chars[i]! + chars[i + 1]!);
      }
      for (const word of run.split(CJK).filter((w) => w.length > 1)) out.push(word);
    } else {
      for (const word of run.split(/[-_]/)) {
        if (word.length < 2 || STOP.has(word)) continue;
        out.push(word.length > 3 && word.endsWith('s') && !word.endsWith('ss') ? word.slice(0, -1) : word);
      }
    }
  }
  return out;
}

/**
 * How much of a question is searched: its last 4,000 characters and 200 distinct terms. A question
 * is a sentence or two; a 900 KB prompt cost 0.4 s of CPU per request before.
 */
const MAX_QUERY_CHARS = 4_000;
const MAX_QUERY_TERMS = 200;

interface Index {
  docTerms: string[][];
  avg: number;
  df: Map<string, number>;
}

/** The terms of a document set, computed once per set (the knowledge source caches its sets). */
const indexes = new WeakMap<readonly KnowledgeDoc[], Index>();

function indexOf(docs: readonly KnowledgeDoc[]): Index {
  let index = indexes.get(docs);
  if (!index) {
    const docTerms = docs.map((doc) => terms(`${doc.title} ${doc.title} ${doc.text} ${doc.keywords ?? ''}`));
    const avg = docTerms.reduce((sum, t) => sum + t.length, 0) / docs.length || 1;
    const df = new Map<string, number>();
    for (const list of docTerms) for (const term of new Set(list)) df.set(term, (df.get(term) ?? 0) + 1);
    index = { docTerms, avg, df };
    indexes.set(docs, index);
  }
  return index;
}

/** BM25 (k1 1.2, b 0.75) over title + text; titles count twice. Returns the top `limit` hits. */
export function search(docs: readonly KnowledgeDoc[], query: string, limit = 3): Hit[] {
  const queryTerms = [...new Set(terms(query.slice(-MAX_QUERY_CHARS)))].slice(0, MAX_QUERY_TERMS);
  if (queryTerms.length === 0 || docs.length === 0) return [];
  const { docTerms, avg, df } = indexOf(docs);
  const hits: Hit[] = [];
  docs.forEach((doc, index) => {
    const list = docTerms[index]!;
    const tf = new Map<string, number>();
    for (const term of list) tf.set(term, (tf.get(term) ?? 0) + 1);
    let score = 0;
    for (const term of queryTerms) {
      const f = tf.get(term) ?? 0;
      if (f === 0) continue;
      const n = df.get(term) ?? 0;
      const idf = Math.log(1 + (docs.length - n + 0.5) / (n + 0.5));
      score += (idf * f * 2.2) / (f + 1.2 * (0.25 + (0.75 * list.length) / avg));
    }
    if (score > 0) hits.push({ doc, score, excerpt: excerpt(doc.text, queryTerms) });
  });
  return hits.sort((a, b) => b.score - a.score || a.doc.id.localeCompare(b.doc.id)).slice(0, limit);
}

/** The two sentences of `text` sharing most terms with the query, in their original order. */
function excerpt(text: string, queryTerms: readonly string[]): string {
  const sentences = text
    .split(/(?<=[.!?])\s+|(?<=[。！？])/u)
    .map((s) => s.trim())
    .filter(Boolean);
  if (sentences.length <= 2) return sentences.join(' ');
  const wanted = new Set(queryTerms);
  const ranked = sentences
    .map((sentence, index) => ({ index, score: terms(sentence).filter((t) => wanted.has(t)).length - index * 0.01 }))
    .sort((a, b) => b.score - a.score)
    .slice(0, 2)
    .sort((a, b) => a.index - b.index);
  return ranked.map((r) => sentences[r.index]).join(' ');
}
