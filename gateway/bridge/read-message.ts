import type { IncomingMessage } from 'node:http';

import { GatewayError } from '../error-table.ts';
import { isRequest, isResponse, type JsonRpcId } from '../internal/json-rpc.ts';
import { readRequestJson } from '../internal/request-text.ts';
import { headerMismatch } from '../mcp-headers.ts';

/** One message a bridged client POSTed: a request (with its id and params), or something that gets no answer. */
export type BridgedMessage =
  | { kind: 'request'; id: JsonRpcId; method: string; params: Record<string, unknown> | undefined }
  /** A client's answer to a request Plaza sent it. */
  | { kind: 'response'; id: JsonRpcId; message: unknown }
  | { kind: 'other'; method: string | undefined; params: unknown };

/**
 * Reads a bridged client's POST: one JSON-RPC message (a batch crosses no revision: 2026-07-28 has
 * none, and the bridge sends each request on its own). Throws a GatewayError for what is not one.
 */
export async function readBridgedMessage(req: IncomingMessage, maxRequest: number): Promise<BridgedMessage> {
  const parsed = await readRequestJson(req, maxRequest);
  if (Array.isArray(parsed))
    throw new GatewayError(
      'invalid_request',
      'Send one JSON-RPC message per POST to this provider: Plaza bridges it to MCP 2026-07-28, which has no batches.',
    );
  if (typeof parsed !== 'object' || parsed === null || (parsed as { jsonrpc?: unknown }).jsonrpc !== '2.0')
    throw new GatewayError('invalid_request', 'Request body is not a JSON-RPC 2.0 message.');
  // A body claiming 2026-07-28 under headers that say otherwise is refused as the passthrough refuses it (-32020).
  const mismatch = headerMismatch(req.headers, parsed);
  if (mismatch !== undefined)
    throw new GatewayError(
      'header_mismatch',
      `Bad Request: the request headers and body disagree: ${mismatch}.`,
      isRequest(parsed) ? parsed.id : null,
    );
  const method = (parsed as { method?: unknown }).method;
  if (isResponse(parsed)) return { kind: 'response', id: parsed.id, message: parsed };
  if (!isRequest(parsed))
    return {
      kind: 'other',
      method: typeof method === 'string' ? method : undefined,
      params: (parsed as { params?: unknown }).params,
    };
  if (typeof parsed.id !== 'string' && !Number.isSafeInteger(parsed.id))
    throw new GatewayError('invalid_request', 'Request ids must be strings or integers (at most 2^53 - 1).');
  const params = (parsed as { params?: unknown }).params;
  if (params !== undefined && (typeof params !== 'object' || params === null || Array.isArray(params)))
    throw new GatewayError('invalid_request', 'params must be an object.', parsed.id);
  return {
    kind: 'request',
    id: parsed.id,
    method: parsed.method,
    params: params as Record<string, unknown> | undefined,
  };
}
