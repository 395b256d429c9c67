import { storableText } from './text.ts';

/** True when `value` nests arrays and objects deeper than `limit` levels; walks without recursion. */
export function nestsDeeperThan(value: unknown, limit: number): boolean {
  const stack: Array<{ value: object; depth: number }> =
    typeof value === 'object' && value !== null ? [{ value, depth: 1 }] : [];
  for (let top = stack.pop(); top; top = stack.pop()) {
    if (top.depth > limit) return true;
    for (const child of Array.isArray(top.value) ? top.value : Object.values(top.value)) {
      if (typeof child === 'object' && child !== null) stack.push({ value: child as object, depth: top.depth + 1 });
    }
  }
  return false;
}

/**
 * A copy of parsed JSON that a `jsonb` column takes: every string and key through
 * {@link storableText} (jsonb refuses `\u0000` and lone surrogate escapes). Recursive: check the
 * depth with {@link nestsDeeperThan} first.
 */
export function storableJson(value: unknown): unknown {
  if (typeof value === 'string') return storableText(value);
  if (Array.isArray(value)) return value.map(storableJson);
  if (typeof value === 'object' && value !== null) {
    const out: Record<string, unknown> = {};
    for (const [key, v] of Object.entries(value)) out[storableText(key)] = storableJson(v);
    return out;
  }
  return value;
}

/**
 * A JSON path as OpenAI's `param` names a request field: `['messages', 0, 'content']` ->
 * `messages[0].content` (numbers are array indexes). The token API's one format for `param`.
 */
export function openAiParam(path: readonly PropertyKey[]): string {
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else out += out === '' ? String(part) : `.${String(part)}`;
  }
  return out;
}
