import { openAiParam, ValidationError } from '../kernel/index.ts';
import { surfaceOf } from './error-table.ts';

const BACKSLASH = 0x5c;

/**
 * Whether a JSON text holds a NUL: a `\u0000` escape that is not an escaped backslash followed by
 * `u0000` (JSON refuses raw control characters in strings, so the escape is the only way in).
 */
export function hasNulEscape(json: Buffer): boolean {
  for (let i = json.indexOf('\\u0000'); i !== -1; i = json.indexOf('\\u0000', i + 1)) {
    let backslashes = 0;
    for (let j = i; j >= 0 && json[j] === BACKSLASH; j--) backslashes++;
    if (backslashes % 2 === 1) return true;
  }
  return false;
}

/** A step of a path into parsed JSON, linked to its parent (a copied array per step was quadratic). */
interface Step {
  key: string | number;
  parent: Step | undefined;
}

/** The path (`['a', 0, 'b']`) of a string or key holding a NUL in a parsed JSON value; [] for the value itself. */
function nulPath(value: unknown): (string | number)[] | undefined {
  // Iterative: bodies may nest thousands of levels deep.
  const stack: [unknown, Step | undefined][] = [[value, undefined]];
  while (stack.length > 0) {
    const [v, at] = stack.pop()!;
    if (typeof v === 'string') {
      if (v.includes('\u0000')) return pathOf(at);
    } else if (Array.isArray(v)) {
      for (let index = 0; index < v.length; index++) stack.push([v[index], { key: index, parent: at }]);
    } else if (v !== null && typeof v === 'object') {
      for (const [key, child] of Object.entries(v)) {
        const step = { key, parent: at };
        if (key.includes('\u0000')) return pathOf(step);
        stack.push([child, step]);
      }
    }
  }
  return undefined;
}

function pathOf(step: Step | undefined): (string | number)[] {
  const path: (string | number)[] = [];
  for (let s = step; s; s = s.parent) path.push(s.key);
  return path.reverse();
}

/**
 * body-parser `verify` for JSON bodies. PostgreSQL text cannot hold U+0000: a NUL that reached a
 * query failed in the database and answered 500. No Plaza body has a use for it, so a NUL anywhere
 * is refused with a 400 naming the field. A UTF-8 body costs one byte search; only one holding the escape (or in another charset,
 * which is rare) is decoded and parsed here.
 */
export function refuseNulInJson(req: unknown, _res: unknown, buf: Buffer, encoding: string | null): void {
  const utf8 = encoding === null || /^utf-?8$/i.test(encoding);
  if (utf8 && !hasNulEscape(buf)) return;
  let parsed: unknown;
  try {
    parsed = JSON.parse(utf8 ? buf.toString('utf8') : new TextDecoder(encoding ?? 'utf-8').decode(buf));
  } catch {
    return; // not JSON (or a charset TextDecoder lacks): the parser itself answers
  }
  const path = nulPath(parsed);
  if (path === undefined) return;
  // Each surface names fields as its other errors do: the token API as OpenAI (`messages[0].content`,
  // like its schema errors), the website as its zod paths (`a.0.b`).
  const url = (req as { url?: unknown } | undefined)?.url;
  const token = typeof url === 'string' && surfaceOf(url.split('?', 1)[0]!) === 'token';
  const field = (token ? openAiParam(path) : path.join('.')).replaceAll('\u0000', '\\u0000');
  throw new ValidationError(
    `Invalid request body: ${field === '' ? '' : `${field}: `}must not contain NUL control characters (\\u0000).`,
    { param: field === '' ? null : field },
  );
}
