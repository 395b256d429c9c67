/** The POST bodies `/mcp` answers or refuses itself, before the SDK's server sees them. */
import type { IncomingMessage } from 'node:http';

import { CallToolRequestSchema, SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';

import { rawJsonText } from '../internal/json-rpc.ts';
import { describeIssues } from '../server-sdk.ts';

/**
 * The one message the fast path answers itself: a single tools/call request without a progress
 * token or task, valid as the SDK's server would validate it, under a supported protocol version.
 * A tools/call whose params are not valid gets `invalid` (answered -32602 here; the SDK's server
 * would answer -32603 with the validator's whole dump). Anything else goes to the SDK's server.
 */
export function plainToolCall(
  req: IncomingMessage,
  body: unknown,
):
  | { id: string | number; params: { name: string; arguments?: unknown; _meta?: Record<string, unknown> } }
  | { id: string | number; invalid: string }
  | undefined {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return undefined;
  const message = body as { jsonrpc?: unknown; id?: unknown; method?: unknown };
  if (
    message.jsonrpc !== '2.0' ||
    message.method !== 'tools/call' ||
    !(typeof message.id === 'string' || (typeof message.id === 'number' && Number.isInteger(message.id)))
  )
    return undefined;
  const version = req.headers['mcp-protocol-version'];
  if (version !== undefined && !SUPPORTED_PROTOCOL_VERSIONS.includes(String(version))) return undefined;
  const parsed = CallToolRequestSchema.safeParse(body);
  if (!parsed.success) return { id: message.id, invalid: describeIssues(parsed.error.issues) };
  const params = parsed.data.params as {
    name: string;
    arguments?: unknown;
    task?: unknown;
    _meta?: Record<string, unknown>;
  };
  if (params.task !== undefined || params._meta?.['progressToken'] !== undefined) return undefined;
  return { id: message.id, params };
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
