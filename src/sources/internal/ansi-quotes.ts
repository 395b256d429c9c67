/**
 * ANSI-C quoting (`$'\x63url'`) as the shell decodes it, so the scan reads the word it makes
 * (`curl`), not the escapes that hide it.
 */

/** Single-character escapes of `$'…'`. */
const SIMPLE: Record<string, string> = {
  a: '\x07',
  b: '\b',
  e: '\x1b',
  E: '\x1b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
  v: '\v',
  '\\': '\\',
  "'": "'",
  '"': '"',
  '?': '?',
};
const OCTAL = /[0-7]{1,3}/y;
/** Text that means the same quoted or not: no blank, quote, glob, expansion, metacharacter or `=` (a command named `a=b` is no assignment). */
const PLAIN = /^[\w./:@%+,-]+$/;
const HEX = { x: /[0-9A-Fa-f]{1,2}/y, u: /[0-9A-Fa-f]{1,4}/y, U: /[0-9A-Fa-f]{1,8}/y } as const;

/** The index of the quote closing the `$'…'` whose text starts at `from` (a `\'` does not close it), or the line's length. */
export function ansiQuoteEnd(line: string, from: number): number {
  for (let i = from; i < line.length; i++) {
    if (line[i] === '\\') i++;
    else if (line[i] === "'") return i;
  }
  return line.length;
}

/** The text of a `$'…'` (`body`, between its quotes), escapes decoded as bash decodes them. */
function decode(body: string): string {
  let out = '';
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (c !== '\\' || i + 1 >= body.length) {
      out += c;
      continue;
    }
    const e = body[++i]!;
    const digits = e === 'x' || e === 'u' || e === 'U' ? HEX[e] : OCTAL;
    digits.lastIndex = digits === OCTAL ? i : i + 1;
    const m = SIMPLE[e] === undefined && e !== 'c' ? digits.exec(body) : null;
    const code = m ? Number.parseInt(m[0], digits === OCTAL ? 8 : 16) : NaN;
    if (SIMPLE[e] !== undefined) out += SIMPLE[e];
    else if (e === 'c' && i + 1 < body.length) out += String.fromCharCode(body.charCodeAt(++i) & 0x1f);
    else if (!m || code > 0x10ffff) out += `\\${e}`;
    else {
      out += digits === OCTAL ? String.fromCharCode(code & 0xff) : String.fromCodePoint(code);
      i += digits === OCTAL ? m[0].length - 1 : m[0].length;
    }
  }
  return out;
}

/**
 * A shell line with each `$'…'` outside other quotes replaced by what it decodes to, bare when that
 * needs no quotes (`$'\x63url'` → `curl`), else single-quoted (a `'` in it written `'\''`), and each `$"…"` by `"…"`:
 * the same words, in the quoting every later reading (variables, rules, the tokenizer) knows. One pass.
 */
export function plainQuotes(line: string): string {
  if (!line.includes("$'") && !line.includes('$"')) return line;
  let out = '';
  let from = 0;
  let double = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (c === '\\') i++;
    else if (double) {
      if (c === '"') double = false;
    } else if (c === "'") {
      const end = line.indexOf("'", i + 1);
      i = end < 0 ? line.length : end;
    } else if (c === '"') double = true;
    else if (c === '$' && line[i + 1] === '"') {
      out += line.slice(from, i);
      from = i + 1;
      double = true;
      i++;
    } else if (c === '$' && line[i + 1] === "'") {
      const end = ansiQuoteEnd(line, i + 2);
      const text = decode(line.slice(i + 2, end));
      // Text the shell would read the same unquoted stands bare, so the rules that read a line's text see it too (`$'\x73udo'` is `sudo`).
      out += line.slice(from, i) + (PLAIN.test(text) ? text : `'${text.replaceAll("'", "'\\''")}'`);
      from = end + 1;
      i = end;
    }
  }
  return out + line.slice(Math.min(from, line.length));
}
