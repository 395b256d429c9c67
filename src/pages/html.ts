/**
 * A tiny HTML builder: every interpolated value is escaped unless it is already `Html` (built by
 * this module). User-supplied text (listing summaries, provider slugs, package names) can only
 * reach a page through `html`, so it always renders as text.
 */

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Markup that is safe to emit as is. */
export class Html {
  readonly value: string;
  constructor(value: string) {
    this.value = value;
  }
  toString(): string {
    return this.value;
  }
}

/** Escapes text for element content and quoted attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

type Part = Html | string | number | boolean | null | undefined | readonly Part[];

function render(part: Part): string {
  if (part === null || part === undefined || part === false) return '';
  if (part instanceof Html) return part.value;
  if (Array.isArray(part)) return part.map(render).join('');
  return escapeHtml(String(part));
}

/** Tagged template: literal parts are trusted markup, interpolations are escaped. */
export function html(strings: TemplateStringsArray, ...values: Part[]): Html {
  let out = strings[0]!;
  values.forEach((value, i) => {
    out += render(value) + strings[i + 1]!;
  });
  return new Html(out);
}

/**
 * JSON for a `<script type="application/json">` data block: `<` is escaped so no value can close
 * the element, whatever it contains.
 */
export function jsonData(value: unknown): Html {
  return new Html(
    JSON.stringify(value)
      .replace(/</g, '\\u003c')
      .replace(/\u2028/g, '\\u2028')
      .replace(/\u2029/g, '\\u2029'),
  );
}

/**
 * The first line of `text`, at most `max` characters: a longer one is cut after its last whole word
 * that fits (a lone word is cut where it must), never inside a surrogate pair, and ends with "…" so
 * a reader knows there is more.
 */
export function excerpt(text: string, max: number): string {
  const line = text.split('\n', 1)[0]!.trimEnd();
  const chars = Array.from(line);
  if (chars.length <= max) return line;
  const cut = chars.slice(0, max - 1).join('');
  const space = cut.lastIndexOf(' ');
  return `${(space > max / 2 ? cut.slice(0, space) : cut).trimEnd()}…`;
}
