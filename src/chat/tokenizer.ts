/**
 * Plaza's token count approximation, used where no model tokenizer exists (the embedded assistant,
 * an upstream that reports no usage). Documented in docs/token-api.md:
 * - every CJK ideograph, kana or hangul syllable is one token;
 * - a run of letters/digits is one token per started 6 characters (common words are single
 *   tokens in BPE vocabularies; long words split into pieces of a few characters);
 * - every other non-space character (punctuation, symbols, emoji) is one token;
 * - a chat message costs 4 tokens of framing on top of its text, a reply 3 tokens of priming.
 */
const PIECE = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]|[\p{L}\p{N}\p{M}]+|[^\s\p{L}\p{N}\p{M}]/gu;

/** Tokens in `text` under the approximation above. */
export function countTokens(text: string): number {
  let count = 0;
  for (const match of text.matchAll(PIECE)) {
    const piece = match[0];
    count += piece.length <= 1 || isCjk(piece) ? 1 : Math.ceil([...piece].length / 6);
  }
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
  return text.match(/\s*(?:[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]|[\p{L}\p{N}\p{M}]{1,6}|[^\s\p{L}\p{N}\p{M}])|\s+$/gu) ?? [];
}

function isCjk(piece: string): boolean {
  return /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u.test(piece);
}
