/**
 * The `Mcp-Param-*` headers of a 2026-07-28 tools/call on `/mcp` (SEP-2243), checked against the
 * called tool's input schema as the catalog has it, as a 2026-07-28 server checks them: an
 * argument its schema marks `x-mcp-header` that the body carries must be mirrored in that header
 * (plain, or `=?base64?…?=`); a missing, undecodable or different header is refused -32020
 * (HeaderMismatch, HTTP 400) before anything is called.
 */
import type { IncomingHttpHeaders } from 'node:http';

import { decodeHeaderValue } from '../mcp-headers.ts';
import { declarations } from '../upstream/param-headers.ts';
import { type CatalogTool, type LocalProvider, TOOL_NAME_SEPARATOR, type ToolCatalog } from './catalog.ts';

/** Input schemas by `<provider>__<tool>`, per tool list the catalog handed out (it reuses a list while it is fresh). */
const schemasOf = new WeakMap<readonly CatalogTool[], Map<string, Record<string, unknown>>>();

/** The input schema of the tool `<provider>__<tool>` named `name`, from the local provider or the catalog. */
export async function toolInputSchema(
  catalog: ToolCatalog,
  local: LocalProvider | undefined,
  name: string,
): Promise<Record<string, unknown> | undefined> {
  const tools =
    local && name.startsWith(`${local.provider}${TOOL_NAME_SEPARATOR}`) ? local.tools() : await catalog.onlineTools();
  let schemas = schemasOf.get(tools);
  if (!schemas) {
    schemas = new Map(tools.map((t) => [`${t.provider}${TOOL_NAME_SEPARATOR}${t.name}`, t.inputSchema]));
    schemasOf.set(tools, schemas);
  }
  return schemas.get(name);
}

/** An argument as its header mirrors it (a string, boolean or finite number), else undefined. */
function mirrored(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value))) return String(value);
  return undefined;
}

/** The disagreeing header and body of a call of a tool with `schema` with `args`; undefined when they agree. */
export function paramHeaderMismatch(
  headers: IncomingHttpHeaders,
  schema: Record<string, unknown> | undefined,
  args: unknown,
): { header: string; body: string } | undefined {
  if (schema === undefined) return undefined;
  for (const { header, path } of declarations(schema)) {
    let value: unknown = args;
    for (const key of path)
      value = typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[key] : undefined;
    const expected = mirrored(value);
    if (expected === undefined) continue;
    const name = `mcp-param-${header.toLowerCase()}`;
    const raw = headers[name];
    const sent = (Array.isArray(raw) ? raw[0] : raw)?.replace(/^[\t ]+|[\t ]+$/g, '');
    const at = `arguments.${path.join('.')}`;
    if (sent === undefined)
      return {
        header: `Mcp-Param-${header}`,
        body: `the body carries ${at} but the Mcp-Param-${header} header is absent`,
      };
    const decoded = decodeHeaderValue(sent);
    if (decoded === undefined)
      return { header: `Mcp-Param-${header}`, body: `the Mcp-Param-${header} header carries an invalid Base64 value` };
    const same = typeof value === 'number' ? decoded.trim() !== '' && Number(decoded) === value : decoded === expected;
    if (!same)
      return { header: `Mcp-Param-${header}`, body: `the Mcp-Param-${header} header and the body's ${at} differ` };
  }
  return undefined;
}
