/**
 * Plaza's token count approximation, used where no model tokenizer exists (the embedded assistant,
 * an upstream that reports no usage). Documented in docs/token-api.md:
 * - every character of a script written without spaces between words (Han, kana, hangul,
 *   bopomofo, Yi, Thai, Lao, Khmer, Myanmar, Tibetan) is one token, wherever it stands;
 * - a run of other letters/digits is one token per started 6 characters (common words are single
 *   tokens in BPE vocabularies; long words split into pieces of a few characters);
 * - every other non-space character (punctuation, symbols, emoji) is one token;
 * - a chat message costs 4 tokens of framing on top of its text, a reply 3 tokens of priming.
 */

/**
 * Scripts written without spaces (by Script_Extensions, so that the katakana long vowel mark and
 * kana voicing marks, shared between scripts, count with them). They are taken out of the letter
 * runs: `[\p{L}]+` alone swallowed `a中中中…` as one run, 3,001 characters as a single token.
 */
const UNSPACED = String.raw`\p{scx=Han}\p{scx=Hiragana}\p{scx=Katakana}\p{scx=Hangul}\p{scx=Bopomofo}\p{scx=Yi}\p{scx=Thai}\p{scx=Lao}\p{scx=Khmer}\p{scx=Myanmar}\p{scx=Tibetan}`;
const UNSPACED_CHAR = String.raw`[[${UNSPACED}]--\s]`;
const WORD_CHAR = String.raw`[[\p{L}\p{N}\p{M}]--[${UNSPACED}]]`;
const OTHER_CHAR = String.raw`[^\s\p{L}\p{N}\p{M}]`;

// Used by splitTokens only, on the embedded assistant's own (short) answers: single character
// classes and runs of at most 6, so no match holds more than a few backtrack entries. A leading
// run of spaces is bounded too (longer runs become pieces of their own).
const SPLIT = new RegExp(String.raw`\s{0,64}(?:${UNSPACED_CHAR}|${WORD_CHAR}{1,6}|${OTHER_CHAR})|\s{1,64}`, 'gv');

/** What a code point is to the count: 1 space (no token), 2 word character (runs), 3 one token. */
const SPACE = 1;
const WORD = 2;
const SINGLE = 3;
const IS_SPACE = new RegExp(String.raw`^\s$`, 'v');
const IS_WORD = new RegExp(`^${WORD_CHAR}$`, 'v');

/**
 * The class of every code point met so far (0 = not looked up yet): 1.1 MB at most, and each code
 * point is looked up once per process, so the scan costs a table read per character. The classes
 * come from the same Unicode property escapes as before, so they follow the engine's Unicode.
 */
const classes = new Uint8Array(0x110000);

function classOf(codePoint: number): number {
  let kind = classes[codePoint]!;
  if (kind === 0) {
    const char = String.fromCodePoint(codePoint);
    kind = IS_SPACE.test(char) ? SPACE : IS_WORD.test(char) ? WORD : SINGLE;
    classes[codePoint] = kind;
  }
  return kind;
}

/**
 * Counts tokens of a text given in parts, as if the parts were one text: a word run or a surrogate
 * pair split between two parts counts once. A loop over the characters with a table read each,
 * no regular expression: linear, constant stack and memory whatever the text (the regex it
 * replaces, `[…]+` run with matchAll, threw RangeError on 8 MB of one letter — V8's backtrack
 * stack grows with the length of a run).
 */
export class TokenCounter {
  #tokens = 0;
  /** Code points of the word run still open at the end of what was added. */
  #run = 0;
  /** A high surrogate that ended the last part (its pair may start the next one). */
  #high = -1;

  /** Adds `text` to what was counted. */
  add(text: string): void {
    if (text === '') return;
    let tokens = this.#tokens;
    let run = this.#run;
    const length = text.length;
    let i = 0;
    if (this.#high >= 0) {
      const high = this.#high;
      this.#high = -1;
      const low = text.charCodeAt(0);
      const pair = low >= 0xdc00 && low <= 0xdfff;
      if (pair) i = 1;
      const kind = pair ? classOf(0x10000 + ((high - 0xd800) << 10) + (low - 0xdc00)) : SINGLE;
      if (kind === WORD) run++;
      else {
        tokens += Math.ceil(run / 6) + 1;
        run = 0;
      }
    }
    for (; i < length; i++) {
      let unit = text.charCodeAt(i);
      if (unit >= 0xd800 && unit <= 0xdbff) {
        if (i + 1 === length) {
          this.#high = unit;
          break;
        }
        const low = text.charCodeAt(i + 1);
        if (low >= 0xdc00 && low <= 0xdfff) {
          unit = 0x10000 + ((unit - 0xd800) << 10) + (low - 0xdc00);
          i++;
        }
      }
      const kind = classOf(unit);
      if (kind === WORD) {
        run++;
        continue;
      }
      if (run > 0) {
        tokens += Math.ceil(run / 6);
        run = 0;
      }
      if (kind === SINGLE) tokens++;
    }
    this.#tokens = tokens;
    this.#run = run;
  }

  /** Tokens of everything added (a pending lone high surrogate counts as one). */
  total(): number {
    return this.#tokens + Math.ceil(this.#run / 6) + (this.#high >= 0 ? 1 : 0);
  }
}

/** Tokens in `text` under the approximation above; linear and safe on any length. */
export function countTokens(text: string): number {
  const counter = new TokenCounter();
  counter.add(text);
  return counter.total();
}

/** Prompt tokens of a conversation: text plus per-message framing and reply priming. */
export function countPromptTokens(messages: readonly { role: string; content: string }[]): number {
  return messages.reduce((sum, m) => sum + 4 + countTokens(m.content), 0) + 3;
}

/**
 * Splits `text` into consecutive pieces of about one token each (spaces stay attached to the
 * following piece), so that joining them gives `text` back; the embedded model streams these.
 */
export function splitTokens(text: string): string[] {
  return text.match(SPLIT) ?? [];
}
