/** JSON-RPC 2.0 message shapes the gateway looks into (everything else passes through). */
export type JsonRpcId = string | number | null;

export interface JsonRpcRequest {
  jsonrpc: '2.0';
  id: JsonRpcId;
  method: string;
  params?: unknown;
}

export interface JsonRpcResponse {
  jsonrpc: '2.0';
  id: JsonRpcId;
  result?: unknown;
  error?: { code: number; message: string; data?: unknown };
}

/** Standard JSON-RPC and MCP error codes Plaza uses. */
export const RPC_ERRORS = {
  parseError: -32700,
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internal: -32603,
  unauthorized: -32001,
} as const;

/**
 * What a caller is told when Plaza cannot read its own storage (agent credentials, the connector
 * catalog) — a database outage: nothing was called upstream, and retrying shortly is safe.
 */
export const STORAGE_UNAVAILABLE = 'Plaza cannot reach its database right now, so nothing was called; retry in a few seconds.';
/** Retry-After (seconds) sent with STORAGE_UNAVAILABLE. */
export const STORAGE_RETRY_AFTER_S = '2';

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** True for a request (has method and an id). Notifications have no id. */
export function isRequest(message: unknown): message is JsonRpcRequest {
  return isRecord(message) && typeof message['method'] === 'string' && 'id' in message && message['id'] !== undefined;
}

/** True for a response (result or error, no method). */
export function isResponse(message: unknown): message is JsonRpcResponse {
  return isRecord(message) && !('method' in message) && ('result' in message || 'error' in message);
}

/** A JSON-RPC error response. */
export function rpcError(id: JsonRpcId, code: number, message: string): JsonRpcResponse {
  return { jsonrpc: '2.0', id, error: { code, message } };
}

/** A tools/call result that reports a failure in-band (spec §7: never a success). */
export function toolErrorResult(id: JsonRpcId, message: string): JsonRpcResponse {
  return { jsonrpc: '2.0', id, result: { content: [{ type: 'text', text: message }], isError: true } };
}
