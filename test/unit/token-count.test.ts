/**
 * Pins countTokens against overflow: the regex it replaced (`[…]+` run with matchAll) threw
 * RangeError (V8's backtrack stack) on 8 MB of one letter, inside undici's error callback of a
 * chat stream that was cut. The count must not change on ordinary text: the old implementation
 * is kept here as the reference and both are compared on a corpus of every character class.
 */
import { describe, expect, it } from 'vitest';

import { countTokens, TokenCounter } from '../../src/chat/index.ts';

const UNSPACED = String.raw`\p{scx=Han}\p{scx=Hiragana}\p{scx=Katakana}\p{scx=Hangul}\p{scx=Bopomofo}\p{scx=Yi}\p{scx=Thai}\p{scx=Lao}\p{scx=Khmer}\p{scx=Myanmar}\p{scx=Tibetan}`;
const OLD_PIECE = new RegExp(
  String.raw`[[${UNSPACED}]--\s]|[[\p{L}\p{N}\p{M}]--[${UNSPACED}]]+|[^\s\p{L}\p{N}\p{M}]`,
  'gv',
);

/** The approximation as it was counted before (the reference for ordinary text). */
function oldCount(text: string): number {
  let count = 0;
  for (const match of text.matchAll(OLD_PIECE)) count += Math.ceil([...match[0]].length / 6);
  return count;
}

/** A deterministic pseudo-random generator (xorshift), so that a failure can be replayed. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 0x1_0000_0000;
  };
}

// Every class the count tells apart, and the characters that sit on their borders: spaces of
// several kinds, Latin and accented letters, combining marks, digits, scripts without spaces
// (Han, kana with its long vowel mark, Hangul, Thai), punctuation, emoji (a surrogate pair),
// astral letters (𝐀, also a pair), lone high and low surrogates, ZWJ, BOM, control characters.
const ALPHABET = [
  ' ',
  '\t',
  '\n',
  '\u00a0',
  '\u3000',
  '\u2028',
  'a',
  'Z',
  'é',
  '\u0301',
  '7',
  '٣',
  '中',
  'の',
  'ー',
  '한',
  'ส',
  '!',
  '，',
  '。',
  '😀',
  '𝐀',
  '\ud800',
  '\udc00',
  '\u200d',
  '\ufeff',
  '\u0000',
  '\u001f',
  'ß',
  'Ω',
  'ж',
];

function corpus(count: number): string[] {
  const next = random(0x5eed);
  const texts: string[] = [];
  for (let i = 0; i < count; i++) {
    let text = '';
    const length = Math.floor(next() * 60);
    // Runs of one character too, so that word runs cross the 6-character steps.
    for (let j = 0; j < length; j++)
      text += ALPHABET[Math.floor(next() * ALPHABET.length)]!.repeat(next() < 0.2 ? Math.floor(next() * 14) : 1);
    texts.push(text);
  }
  return texts;
}

describe('countTokens', () => {
  it('counts ordinary text as before, on a corpus of every character class', () => {
    const prose = [
      'Hello, world! Plaza is an MCP gateway and agent marketplace.',
      'Plaza 是一个 MCP 网关和智能体市场，每次调用都会写入回执。',
      'エージェントのカードにはdisplay_nameがあります。',
      'internationalization ⇒ 4 tokens; naïve café déjà-vu 👩‍💻 𝐀𝐁𝐂',
    ];
    for (const text of [...prose, ...corpus(3_000)])
      expect(countTokens(text), JSON.stringify(text)).toBe(oldCount(text));
  });

  it('counts a text given in parts as the whole, wherever it is cut (word runs, surrogate pairs)', () => {
    const next = random(42);
    for (const text of corpus(500)) {
      const counter = new TokenCounter();
      let at = 0;
      while (at < text.length) {
        const end = Math.min(text.length, at + Math.floor(next() * 8));
        counter.add(text.slice(at, end));
        at = end;
      }
      expect(counter.total(), JSON.stringify(text)).toBe(countTokens(text));
    }
  });

  it.each([
    ['one letter', () => 'x'.repeat(16 << 20), (16 << 20) / 6],
    ['a letter and a combining mark', () => 'e\u0301'.repeat(8 << 20), (16 << 20) / 6],
    ['astral letters', () => '𝐀'.repeat(8 << 20), (8 << 20) / 6],
    ['a letter and punctuation alternating', () => 'a!'.repeat(8 << 20), 16 << 20],
    ['Han after Latin', () => 'a中'.repeat(8 << 20), 16 << 20],
    ['lone high surrogates', () => '\ud800'.repeat(16 << 20), 16 << 20],
  ])('counts 16 M code units of %s without overflowing', (_name, make, tokens) => {
    expect(countTokens(make())).toBe(Math.ceil(tokens));
  });
});
