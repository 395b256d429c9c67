/** The POST bodies `/mcp` answers or refuses itself, before the SDK's server sees them. */
import type { IncomingMessage } from 'node:http';

import { CallToolRequestSchema, SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';

import { rawJsonText } from '../internal/json-rpc.ts';
import { describeIssues } from '../server-sdk.ts';

/** The revision whose requests carry the per-request `_meta` envelope. */
export const MODERN_REVISION = '2026-07-28';
const VERSION_KEY = 'io.modelcontextprotocol/protocolVersion';
const CLIENT_INFO_KEY = 'io.modelcontextprotocol/clientInfo';
const CAPABILITIES_KEY = 'io.modelcontextprotocol/clientCapabilities';

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** A tools/call the fast path answers: its id, params, and for a 2026-07-28 request the capabilities it declared. */
export interface PlainToolCall {
  id: string | number;
  params: { name: string; arguments?: unknown; _meta?: Record<string, unknown> };
  /** Set for a 2026-07-28 request (its answer carries `resultType`). */
  modern?: { clientCapabilities: Record<string, unknown> };
}

/**
 * The one message the fast path answers itself: a single tools/call request without a task,
 * valid as the SDK's server would validate it — under a 2025 revision (no envelope in `_meta`;
 * a progress token's progress goes on the answer's event stream), or under 2026-07-28 with its
 * envelope whole, no progress token, the MCP-Protocol-Version, Mcp-Method and Mcp-Name headers
 * agreeing with the body, and no round trip of input under way.
 * A 2025 tools/call whose params are not valid gets `invalid` (answered -32602 here; the SDK's
 * server would answer -32603 with the validator's whole dump). Anything else goes to an SDK's
 * server (a 2026-07-28 request that is not whole there, for the revision's own error codes).
 */
export function plainToolCall(
  req: IncomingMessage,
  body: unknown,
): PlainToolCall | { id: string | number; invalid: string } | undefined {
  if (!isObject(body)) return undefined;
  const message = body as { jsonrpc?: unknown; id?: unknown; method?: unknown; params?: unknown };
  if (
    message.jsonrpc !== '2.0' ||
    message.method !== 'tools/call' ||
    !(typeof message.id === 'string' || (typeof message.id === 'number' && Number.isInteger(message.id)))
  )
    return undefined;
  const meta = isObject(message.params) && isObject(message.params['_meta']) ? message.params['_meta'] : undefined;
  const claimed = meta?.[VERSION_KEY];
  const version = req.headers['mcp-protocol-version'];
  let modern: PlainToolCall['modern'];
  if (claimed === undefined) {
    if (version !== undefined && !SUPPORTED_PROTOCOL_VERSIONS.includes(String(version))) return undefined;
  } else {
    const capabilities = meta![CAPABILITIES_KEY];
    if (
      claimed !== MODERN_REVISION ||
      version !== MODERN_REVISION ||
      req.headers['mcp-method'] !== 'tools/call' ||
      !isObject(capabilities) ||
      !isObject(meta![CLIENT_INFO_KEY]) ||
      (message.params as Record<string, unknown>)['inputResponses'] !== undefined ||
      (message.params as Record<string, unknown>)['requestState'] !== undefined
    )
      return undefined;
    modern = { clientCapabilities: capabilities };
  }
  const parsed = CallToolRequestSchema.safeParse(body);
  if (!parsed.success) return modern ? undefined : { id: message.id, invalid: describeIssues(parsed.error.issues) };
  const params = parsed.data.params as PlainToolCall['params'] & { task?: unknown };
  // A 2025 call's progress goes on its lazy event stream (lazy-stream.ts); a 2026-07-28 caller's
  // on the SDK v2 server's stream.
  if (params.task !== undefined || (modern && params._meta?.['progressToken'] !== undefined)) return undefined;
  // Mcp-Name carries the tool's name as sent (the SDK refuses a mismatch with -32020).
  if (modern && req.headers['mcp-name'] !== params.name) return undefined;
  return modern ? { id: message.id, params, modern } : { id: message.id, params };
}

/**
 * Why a POST body is refused before anything runs, as `/mcp/p/…` refuses it: an empty batch, a
 * tools/call sent as a notification (it would run with nobody told, or not at all), a request id
 * the caller's answer could not carry back (past 2^53), or two requests of a batch under one id
 * (their answers could not be told apart). Undefined when none of these.
 */
export function refusedMessages(body: unknown): string | undefined {
  const messages = Array.isArray(body) ? body : [body];
  if (messages.length === 0) return 'An empty batch holds no JSON-RPC message.';
  const ids = new Set<unknown>();
  for (const m of messages) {
    if (typeof m !== 'object' || m === null) continue;
    const { id, method } = m as { id?: unknown; method?: unknown };
    if (method === 'tools/call' && id === undefined)
      return 'tools/call must be a request with an id: a notification gets no answer and no receipt.';
    if (typeof method !== 'string' || id === undefined) continue;
    if (rawJsonText(id) !== undefined || (typeof id === 'number' && !Number.isSafeInteger(id)))
      return 'Request ids must be strings or integers (at most 2^53 - 1).';
    if (ids.has(id)) return 'Request ids must be unique within a batch.';
    ids.add(id);
  }
  return undefined;
}
