/**
 * The `Mcp-Param-{Name}` headers of a 2026-07-28 `tools/call` (SEP-2243): a tool's input schema
 * may mark properties, reached from its root through `properties` alone, with `x-mcp-header:
 * "<Name>"`; a call then mirrors each such argument's value in that header, and the server refuses
 * (-32020) a call whose headers and arguments disagree.
 */
import { headerValue } from './header-value.ts';

export interface Declaration {
  header: string;
  path: readonly string[];
}

/** An HTTP token (RFC 9110 §5.6.2): what a header name may be made of. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const KINDS = new Set(['string', 'integer', 'boolean']);
/** How deep the walk goes (a schema is the provider's, its depth is not). */
const MAX_DEPTH = 16;
/** Declarations by schema: the catalog's schema objects are reused from call to call. */
const scanned = new WeakMap<object, readonly Declaration[]>();

/** The declarations of `schema` (the header's name and the argument's path), found once per schema object. */
export function declarations(schema: Record<string, unknown>): readonly Declaration[] {
  const known = scanned.get(schema);
  if (known) return known;
  const found: Declaration[] = [];
  const visit = (node: unknown, path: string[]) => {
    if (typeof node !== 'object' || node === null || path.length > MAX_DEPTH) return;
    const at = node as Record<string, unknown>;
    const name = at['x-mcp-header'];
    if (path.length > 0 && typeof name === 'string' && TOKEN.test(name) && KINDS.has(String(at['type'])))
      found.push({ header: name, path });
    const properties = at['properties'];
    if (typeof properties !== 'object' || properties === null) return;
    for (const [key, child] of Object.entries(properties)) visit(child, [...path, key]);
  };
  visit(schema, []);
  scanned.set(schema, found);
  return found;
}

/** The `Mcp-Param-*` headers of a call of a tool with `schema` with `args` (none when it declares none). */
export function paramHeaders(schema: Record<string, unknown> | undefined, args: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (schema === undefined) return out;
  for (const { header, path } of declarations(schema)) {
    let value: unknown = args;
    for (const key of path)
      value = typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[key] : undefined;
    // An absent or null argument has no header; neither has one that is not a primitive (the server says why).
    let text: string | undefined;
    if (typeof value === 'string') text = value;
    else if (typeof value === 'boolean') text = String(value);
    else if (
      typeof value === 'number' &&
      Number.isFinite(value) &&
      (!Number.isInteger(value) || Number.isSafeInteger(value))
    )
      text = String(value);
    if (text !== undefined) out[`mcp-param-${header.toLowerCase()}`] = headerValue(text);
  }
  return out;
}
