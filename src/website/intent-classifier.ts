import type { WebsiteContent } from './content.ts';
import type { ScenarioId } from './schemas.ts';

/** Weights of the evidence kinds: curated vocabulary beats a word from a scenario's copy. */
const KEYWORD_WEIGHT = 3;
const NAME_WEIGHT = 2;
const COPY_WEIGHT = 1;
/** Below this a prompt is "no signal" and gets the default scenario. */
const MIN_SCORE = 1;
const MAX_TERMS = 3;

const LATIN_WORD = /[\p{Script=Latin}\p{N}]+/gu;
const HAN_RUN = /\p{Script=Han}+/gu;
const HAS_HAN = /\p{Script=Han}/u;
const STOPWORDS = new Set(
  'the and for with your you our every each that this from into they them their its are was were will can all any one per not own more than then when what which who how use using used across through'.split(
    ' ',
  ),
);
// Function characters that make Chinese bigrams meaningless (的智, 个智 …).
const HAN_FUNCTION_CHARS = new Set([
  ...'的了和与及让每个一是在您并都把为所可以其这那从将被给也就而或等中上下们我你他它',
]);

interface Phrase {
  /** The keyword as written in the content, for explaining a match. */
  display: string;
  /** Latin phrases: ` stem stem ` matched against the prompt's stem stream; Han: a substring. */
  needle: string;
  /** The first stem (Latin) or character (Han): a cheap pre-check before the substring search. */
  first: string;
  latin: boolean;
  weights: Map<ScenarioId, number>;
}

/** The classifier's precomputed vocabulary over every locale's content. Immutable once built. */
export interface IntentIndex {
  readonly order: readonly ScenarioId[];
  readonly defaultScenario: ScenarioId;
  readonly phrases: readonly Phrase[];
  /** Stemmed words and Han bigrams from scenario names and copy → weight per scenario. */
  readonly features: ReadonlyMap<string, ReadonlyMap<ScenarioId, number>>;
}

/** A ranked classification of one prompt. */
export interface IntentClassification {
  scenarioId: ScenarioId;
  /** False when nothing in the prompt pointed anywhere and the default scenario was chosen. */
  matched: boolean;
  /** Every scenario, best first. */
  ranking: { scenarioId: ScenarioId; score: number }[];
  /** Up to three words or keywords from the prompt that decided it, strongest first. */
  terms: string[];
}

function stem(word: string): string {
  if (word.length > 4 && word.endsWith('ies')) return `${word.slice(0, -3)}y`;
  if (word.length > 5 && word.endsWith('ing')) return word.slice(0, -3);
  if (word.length > 4 && word.endsWith('ed')) return word.slice(0, -2);
  if (word.length > 3 && word.endsWith('s') && !word.endsWith('ss')) return word.slice(0, -1);
  return word;
}

function normalise(text: string): string {
  return text.normalize('NFKC').toLowerCase();
}

function latinWords(text: string): string[] {
  return text.match(LATIN_WORD) ?? [];
}

function hanBigrams(text: string): string[] {
  const out: string[] = [];
  for (const run of text.match(HAN_RUN) ?? []) {
    const chars = [...run];
    for (let i = 0; i + 1 < chars.length; i++) {
      const a = chars[i]!;
      const b = chars[i + 1]!;
      if (!HAN_FUNCTION_CHARS.has(a) && !HAN_FUNCTION_CHARS.has(b)) out.push(a + b);
    }
  }
  return out;
}

function copyFeatures(text: string): string[] {
  const t = normalise(text);
  const words = latinWords(t)
    .filter((w) => w.length >= 3 && !STOPWORDS.has(w))
    .map(stem);
  return [...words, ...hanBigrams(t)];
}

function add(map: Map<ScenarioId, number>, id: ScenarioId, weight: number): void {
  map.set(id, Math.max(map.get(id) ?? 0, weight));
}

/** Scales weights by rarity across scenarios (log IDF), so a word every scenario uses decides nothing. */
function applyIdf(weights: Map<ScenarioId, number>, total: number): void {
  const idf = Math.log(1 + total / weights.size) / Math.log(1 + total);
  for (const [id, w] of weights) weights.set(id, w * idf);
}

/**
 * Builds the classifier's index from every locale's scenarios: curated keywords (both languages)
 * and the words of each scenario's name, headline and description, weighted by rarity.
 */
export function buildIntentIndex(content: WebsiteContent): IntentIndex {
  const order = content.files[0]!.scenarios.map((s) => s.id);
  const phrases = new Map<string, Phrase>();
  const features = new Map<string, Map<ScenarioId, number>>();
  for (const file of content.files) {
    for (const scenario of file.scenarios) {
      for (const keyword of scenario.keywords) {
        const t = normalise(keyword.trim());
        const words = latinWords(t);
        const latin = !HAS_HAN.test(t);
        const needle = latin ? ` ${words.map(stem).join(' ')} ` : t;
        if (needle.trim() === '') continue;
        const first = latin ? stem(words[0] ?? '') : HAS_HAN.exec(t)![0];
        const phrase = phrases.get(needle) ?? { display: keyword.trim(), needle, first, latin, weights: new Map() };
        add(phrase.weights, scenario.id, KEYWORD_WEIGHT);
        phrases.set(needle, phrase);
      }
      const sources: [string, number][] = [
        [scenario.name, NAME_WEIGHT],
        [scenario.headline, COPY_WEIGHT],
        [scenario.description, COPY_WEIGHT],
      ];
      for (const [text, weight] of sources) {
        for (const feature of copyFeatures(text)) {
          const weights = features.get(feature) ?? new Map<ScenarioId, number>();
          add(weights, scenario.id, weight);
          features.set(feature, weights);
        }
      }
    }
  }
  for (const phrase of phrases.values()) applyIdf(phrase.weights, order.length);
  for (const weights of features.values()) applyIdf(weights, order.length);
  return { order, defaultScenario: content.defaultScenario, phrases: [...phrases.values()], features };
}

/**
 * Classifies a prompt (any language, any mix) onto a scenario: sums the weights of every keyword
 * and copy word it contains, ranks the scenarios, and falls back to the default scenario when the
 * best score is too weak. Pure and allocation-light: the index does the heavy lifting.
 */
export function classifyIntent(index: IntentIndex, prompt: string): IntentClassification {
  const text = normalise(prompt);
  const words = latinWords(text);
  const stems = words.map(stem);
  const stream = ` ${stems.join(' ')} `;
  const present = new Set<string>(stems);
  for (const char of text.match(HAN_RUN)?.join('') ?? '') present.add(char);
  const scores = new Map<ScenarioId, number>(index.order.map((id) => [id, 0]));
  const evidence: { term: string; scenarios: ReadonlyMap<ScenarioId, number> }[] = [];

  for (const phrase of index.phrases) {
    if (!present.has(phrase.first)) continue;
    const hit = phrase.latin ? stream.includes(phrase.needle) : text.includes(phrase.needle);
    if (!hit) continue;
    for (const [id, w] of phrase.weights) scores.set(id, scores.get(id)! + w);
    evidence.push({ term: phrase.display, scenarios: phrase.weights });
  }
  const seen = new Set<string>();
  const original = new Map<string, string>();
  words.forEach((word, i) => original.set(stems[i]!, word));
  for (const feature of [...stems, ...hanBigrams(text)]) {
    if (seen.has(feature)) continue;
    seen.add(feature);
    const weights = index.features.get(feature);
    if (!weights) continue;
    for (const [id, w] of weights) scores.set(id, scores.get(id)! + w);
    evidence.push({ term: original.get(feature) ?? feature, scenarios: weights });
  }

  const ranking = index.order
    .map((scenarioId) => ({ scenarioId, score: Math.round(scores.get(scenarioId)! * 1000) / 1000 }))
    .sort((a, b) => b.score - a.score);
  const best = ranking[0]!;
  const matched = best.score >= MIN_SCORE;
  const scenarioId = matched ? best.scenarioId : index.defaultScenario;
  const terms = matched
    ? [
        ...new Set(
          evidence
            .filter((e) => e.scenarios.has(scenarioId))
            .sort((a, b) => b.scenarios.get(scenarioId)! - a.scenarios.get(scenarioId)!)
            .map((e) => e.term),
        ),
      ].slice(0, MAX_TERMS)
    : [];
  return { scenarioId, matched, ranking, terms };
}
