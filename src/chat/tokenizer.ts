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

// Single character classes and one unbounded run with nothing after it: no backtracking, linear.
const PIECE = new RegExp(`${UNSPACED_CHAR}|${WORD_CHAR}+|${OTHER_CHAR}`, 'gv');
const SPLIT = new RegExp(String.raw`\s*(?:${UNSPACED_CHAR}|${WORD_CHAR}{1,6}|${OTHER_CHAR})|\s+$`, 'gv');

/** Tokens in `text` under the approximation above. */
export function countTokens(text: string): number {
  let count = 0;
  // Every piece but a word run is one character, and one token.
  for (const match of text.matchAll(PIECE)) count += Math.ceil(codePoints(match[0]) / 6);
  return count;
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

function codePoints(piece: string): number {
  let count = piece.length;
  for (let i = 0; i < piece.length; i++) {
    const unit = piece.charCodeAt(i);
    if (unit >= 0xdc00 && unit <= 0xdfff && i > 0 && (piece.charCodeAt(i - 1) & 0xfc00) === 0xd800) count--;
  }
  return count;
}
