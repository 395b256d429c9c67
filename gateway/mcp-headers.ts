/**
 * The standard request headers of MCP 2026-07-28 (`MCP-Protocol-Version`, `Mcp-Method`,
 * `Mcp-Name`), checked against the body they mirror before anything goes upstream: a request whose
 * headers disagree with its body, or lack one its revision requires, is refused with -32020
 * (HeaderMismatch, HTTP 400) — an intermediary acting on the headers and a server acting on the
 * body would otherwise act on two different requests. Earlier revisions define none of these
 * headers: a message without a per-request `_meta` envelope is checked no further.
 */
import type { IncomingHttpHeaders } from 'node:http';

/** Where the per-request envelope names its protocol revision (`params._meta`). */
export const PROTOCOL_VERSION_META_KEY = 'io.modelcontextprotocol/protocolVersion';
/** The first revision with per-request envelopes and standard request headers. */
export const FIRST_MODERN_REVISION = '2026-07-28';

/** The body member each method's `Mcp-Name` mirrors (params.name, params.uri, params.taskId). */
export const NAME_SOURCE: Readonly<Record<string, string>> = {
  'tools/call': 'name',
  'prompts/get': 'name',
  'resources/read': 'uri',
  'tasks/get': 'taskId',
  'tasks/update': 'taskId',
  'tasks/cancel': 'taskId',
};

const SENTINEL = /^=\?base64\?([A-Za-z0-9+/]*={0,2})\?=$/;

/** Whether `version` is 2026-07-28 or a later revision (revisions are dates, compared as text). */
export function isModernRevision(version: unknown): version is string {
  return typeof version === 'string' && version >= FIRST_MODERN_REVISION;
}

/** The revision a message's envelope claims (`params._meta`), or undefined for a message without one. */
export function claimedRevision(message: unknown): string | undefined {
  const params = (message as { params?: unknown } | null)?.params;
  if (typeof params !== 'object' || params === null) return undefined;
  const meta = (params as { _meta?: unknown })._meta;
  if (typeof meta !== 'object' || meta === null) return undefined;
  const claimed = (meta as Record<string, unknown>)[PROTOCOL_VERSION_META_KEY];
  return typeof claimed === 'string' ? claimed : undefined;
}

/** A header's one value, without the optional whitespace around it; undefined when absent. */
function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  const one = Array.isArray(value) ? value[0] : value;
  return one === undefined ? undefined : one.replace(/^[\t ]+|[\t ]+$/g, '');
}

/** An `Mcp-Name` value decoded (`=?base64?…?=` is Base64 of UTF-8); undefined when its Base64 is not. */
export function decodeHeaderValue(value: string): string | undefined {
  if (!value.startsWith('=?base64?') || !value.endsWith('?=')) return value;
  const b64 = SENTINEL.exec(value)?.[1];
  if (b64 === undefined || b64.length % 4 !== 0) return undefined;
  const bytes = Buffer.from(b64, 'base64');
  // Base64 that does not read back as itself (stray bits) is not canonical.
  if (bytes.toString('base64') !== b64) return undefined;
  const text = new TextDecoder('utf-8', { fatal: true });
  try {
    return text.decode(bytes);
  } catch {
    return undefined;
  }
}

/**
 * Why the MCP headers of a POST carrying `message` (one JSON-RPC message, not a batch) disagree
 * with it, or undefined when they agree (or the message claims no revision, as before 2026-07-28).
 */
export function headerMismatch(headers: IncomingHttpHeaders, message: unknown): string | undefined {
  const claimed = claimedRevision(message);
  if (claimed === undefined) return undefined;
  const { method, id } = message as { method?: unknown; id?: unknown };
  if (typeof method !== 'string') return undefined;
  const version = header(headers, 'mcp-protocol-version');
  const methodHeader = header(headers, 'mcp-method');
  if (version !== undefined && version !== claimed)
    return `the body's _meta names protocol version ${claimed} but the MCP-Protocol-Version header names ${version}`;
  if (methodHeader !== undefined && methodHeader !== method)
    return `the body names method ${method} but the Mcp-Method header names ${methodHeader}`;
  // The revisions that define the headers require them on every request (a notification is exempt).
  if (!isModernRevision(claimed) || id === undefined) return undefined;
  if (version === undefined)
    return `the body's _meta names protocol version ${claimed} but MCP-Protocol-Version is absent`;
  if (methodHeader === undefined) return `the body names method ${method} but Mcp-Method is absent`;
  const field = Object.hasOwn(NAME_SOURCE, method) ? NAME_SOURCE[method]! : undefined;
  if (field === undefined) return undefined;
  const params = (message as { params?: Record<string, unknown> }).params;
  const bodyValue = typeof params?.[field] === 'string' ? params[field] : undefined;
  const nameHeader = header(headers, 'mcp-name');
  if (nameHeader === undefined)
    return bodyValue === undefined ? undefined : `the body carries params.${field} but Mcp-Name is absent`;
  const decoded = decodeHeaderValue(nameHeader);
  if (decoded === undefined) return 'the Mcp-Name header carries an invalid Base64 sentinel value';
  if (bodyValue !== undefined && decoded !== bodyValue)
    return `the body's params.${field} and the Mcp-Name header name different ${field === 'uri' ? 'resources' : 'things'}`;
  return undefined;
}
