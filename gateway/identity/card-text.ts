/**
 * What text an AGIN card field (display_name, owner_context) may hold, and the one form it is
 * stored and stamped in. Providers receive these fields in `_meta.platform` and compare them;
 * many strip or normalise first (Python's `str.strip()`, NFKC), so a value that only looks
 * different to Plaza — a leading zero-width space, a control character, `ａccount:` in fullwidth,
 * `account :` — must not reach them as something else. So every field is NFKC-normalised, its
 * spaces collapsed and trimmed, and characters that are invisible or mean nothing are refused.
 */

/**
 * Refused anywhere in a field: controls (Cc: NUL, tab, newline, U+001F…), format characters (Cf:
 * zero-width spaces and joiners, bidi overrides, the BOM, tag characters), unassigned code points
 * (Cn), private use (Co), lone surrogates (Cs), line and paragraph separators (Zl, Zp), and the
 * other default-ignorable code points (Hangul fillers, which draw nothing) except variation
 * selectors, which emoji and CJK ideographs use and which draw nothing on their own.
 */
const REFUSED = new RegExp(
  String.raw`[\p{Cc}\p{Cf}\p{Cn}\p{Co}\p{Cs}\p{Zl}\p{Zp}]|[\p{DI}--[\u{FE00}-\u{FE0F}\u{E0100}-\u{E01EF}]]`,
  'v',
);

const KINDS: [RegExp, string][] = [
  [/\p{Cc}/u, 'a control character'],
  [/\p{Cf}/u, 'an invisible format character'],
  [/\p{Cn}/u, 'an unassigned code point'],
  [/\p{Co}/u, 'a private-use character'],
  [/\p{Cs}/u, 'a lone surrogate'],
  [/[\p{Zl}\p{Zp}]/u, 'a line or paragraph separator'],
];

const SPACES = /\p{Zs}+/gu;

/**
 * Characters read as a letter of a reserved prefix (or as its colon) by people, or by a provider
 * that compares loosely: Cyrillic, Greek, Armenian and small-capital look-alikes, digits, and
 * colon-like marks NFKC leaves alone. Applied only for the reserved-prefix check, never to what is
 * stored.
 */
const LOOK_ALIKES: Record<string, string> = {
  а: 'a',
  ɑ: 'a',
  α: 'a',
  '⍺': 'a',
  ᴀ: 'a',
  с: 'c',
  ϲ: 'c',
  ᴄ: 'c',
  о: 'o',
  ο: 'o',
  օ: 'o',
  ᴏ: 'o',
  '0': 'o',
  σ: 'o',
  ս: 'u',
  υ: 'u',
  ᴜ: 'u',
  ʋ: 'u',
  ո: 'n',
  ռ: 'n',
  ᴎ: 'n',
  т: 't',
  τ: 't',
  ᴛ: 't',
  р: 'p',
  ρ: 'p',
  ᴘ: 'p',
  I: 'l',
  ӏ: 'l',
  І: 'l',
  Ι: 'l',
  ǀ: 'l',
  '1': 'l',
  '|': 'l',
  ʟ: 'l',
  ᴢ: 'z',
  ː: ':',
  '˸': ':',
  '։': ':',
  '׃': ':',
  '∶': ':',
  '꞉': ':',
  '܃': ':',
  '፡': ':',
  '᛬': ':',
  '⁚': ':',
  ';': ':',
};
const LOOK_ALIKE = new RegExp(`[${Object.keys(LOOK_ALIKES).join('').replaceAll('|', '\\|')}]`, 'gu');

/** Why a field's text was refused: the first offending character and what it is. */
export interface CardTextRefusal {
  /** `U+200B` */
  codePoint: string;
  /** Offset in code points from the start of the value as sent. */
  position: number;
  /** e.g. "an invisible format character". */
  kind: string;
}

/**
 * The stored form of a card field: NFKC, every run of spaces (any Unicode space) as one U+0020,
 * trimmed; or the refusal of a value holding a character no field may hold. Idempotent: the
 * form it returns comes back unchanged.
 */
export function cardText(value: string): { text: string } | { refused: CardTextRefusal } {
  const normal = value.normalize('NFKC');
  // NFKC introduces none of the refused characters, so finding one in the value as sent names it
  // where the caller put it; the normal form is checked too, should a future Unicode differ.
  const refusal = refusalIn(value) ?? refusalIn(normal);
  if (refusal) return { refused: refusal };
  return { text: normal.replace(SPACES, ' ').trim() };
}

/**
 * The stored form of text that may hold refused characters (a row stored before they were
 * refused): they are dropped, before and after NFKC, so the result passes {@link cardText}.
 */
export function cardTextDropping(value: string): string {
  const all = new RegExp(REFUSED.source, 'gv');
  return value.replace(all, '').normalize('NFKC').replace(all, '').replace(SPACES, ' ').trim();
}

function refusalIn(value: string): CardTextRefusal | undefined {
  const match = REFUSED.exec(value);
  if (!match) return undefined;
  const char = match[0];
  const point = char.codePointAt(0)!;
  const kind = KINDS.find(([test]) => test.test(char))?.[1] ?? 'an invisible character';
  return {
    codePoint: `U+${point.toString(16).toUpperCase().padStart(4, '0')}`,
    position: [...value.slice(0, match.index)].length,
    kind,
  };
}

/**
 * The owner contexts Plaza vouches for, which no caller may set: `account:…` (an account's own
 * context, the default of its agents) and `plaza` / `plaza:…` (Plaza's own agents).
 */
export const RESERVED_OWNER_CONTEXTS = { prefixes: ['account:', 'plaza:'], values: ['plaza'] } as const;

/**
 * Whether an owner context (already in its stored form) reads as a reserved one: compared after
 * case folding, with look-alike letters and colons read as the ASCII ones and spaces around a
 * colon dropped, so `ACCOUNT :x`, `аccount:x` (Cyrillic а) or `acc0unt:x` count as `account:x`.
 */
export function reservedOwnerContext(text: string): boolean {
  const skeleton = text
    .replace(LOOK_ALIKE, (char) => LOOK_ALIKES[char]!)
    .toLowerCase()
    .normalize('NFKC')
    .replace(LOOK_ALIKE, (char) => LOOK_ALIKES[char]!)
    .replace(/\s*:\s*/gu, ':');
  return (
    RESERVED_OWNER_CONTEXTS.values.some((value) => skeleton === value) ||
    RESERVED_OWNER_CONTEXTS.prefixes.some((prefix) => skeleton.startsWith(prefix))
  );
}
