/** JSON-RPC 2.0 ids and responses, and the error codes Plaza answers with. */
export type JsonRpcId = string | number | null;

/** A JSON-RPC response: a result or an error under the id of the request it answers. */
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
  /** MCP 2026-07-28: the request's headers disagree with its body (MCP-Protocol-Version, Mcp-Method, Mcp-Name). */
  headerMismatch: -32020,
  /** MCP 2026-07-28: the request needs a client capability its `_meta` does not declare. */
  missingClientCapability: -32021,
  /** MCP 2026-07-28: the protocol version the request names is not one the server speaks. */
  unsupportedProtocolVersion: -32022,
} as const;

/** A JSON-RPC error response. */
export function rpcError(id: JsonRpcId, code: number, message: string): JsonRpcResponse {
  return { jsonrpc: '2.0', id, error: { code, message } };
}
