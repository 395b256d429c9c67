import type { ServerResponse } from 'node:http';

import { STORAGE_RETRY_AFTER_S } from './internal/json-rpc.ts';
import { sendJson } from './internal/send-json.ts';
import { type JsonRpcId, RPC_ERRORS, rpcError } from './json-rpc-errors.ts';

/**
 * The refusals the gateway itself answers (not an upstream's answers, which it relays): one name
 * per case, so that every entry point answers a case with the same status and code.
 */
export type GatewayErrorCode =
  | 'unauthorized'
  | 'insufficient_scope'
  | 'storage_unavailable'
  | 'shutting_down'
  | 'body_too_large'
  | 'body_cut'
  | 'not_utf8'
  | 'parse_error'
  | 'invalid_request'
  | 'invalid_params'
  | 'invalid_call_params'
  | 'method_not_allowed'
  | 'sdk_method_not_allowed'
  | 'unsupported_encoding'
  | 'no_connector'
  | 'session_gone'
  | 'upstream_credential_refused'
  | 'held_answers_full'
  | 'call_refused'
  | 'origin_refused'
  | 'header_mismatch'
  | 'missing_client_capability'
  | 'unsupported_protocol_version'
  | 'not_acceptable'
  | 'too_many_streams';

/** One row of the gateway's error table. */
export interface GatewayErrorRow {
  /** HTTP status of the answer (200 for an answer given in-band). */
  status: number;
  /** JSON-RPC error code of the answer (a tools/call refused in-band gets an `isError` result instead). */
  rpcCode: number;
  /**
   * `http`: the request is refused as a whole, at the HTTP level, under the status. `in-band`: each
   * request is answered under its own id with HTTP 200, as MCP has failures of a call answered.
   */
  answer: 'http' | 'in-band';
  /** Retry-After (seconds) sent with it: the refusal is for now, not for good. */
  retryAfterS?: string;
  /** The request's body was left unread: the connection cannot carry another request. */
  closesConnection?: true;
}

/**
 * The one table from a gateway refusal to its HTTP status and JSON-RPC code, for `/mcp`,
 * `/mcp/p/<provider>` and `/mcp/p/platform` alike. Pinned by test/unit/gateway-error-table.test.ts;
 * code that refuses names a row, never a status.
 */
export const GATEWAY_ERROR_TABLE: Readonly<Record<GatewayErrorCode, GatewayErrorRow>> = {
  unauthorized: { status: 401, rpcCode: RPC_ERRORS.unauthorized, answer: 'http' },
  // A valid credential without a scope the endpoint needs (an OAuth token granted without `mcp`):
  // RFC 6750 §3.1's 403, with the scope to ask for in its challenge.
  insufficient_scope: { status: 403, rpcCode: RPC_ERRORS.unauthorized, answer: 'http' },
  storage_unavailable: {
    status: 503,
    rpcCode: RPC_ERRORS.internal,
    answer: 'http',
    retryAfterS: STORAGE_RETRY_AFTER_S,
  },
  shutting_down: { status: 503, rpcCode: RPC_ERRORS.internal, answer: 'http', retryAfterS: STORAGE_RETRY_AFTER_S },
  body_too_large: { status: 413, rpcCode: RPC_ERRORS.invalidRequest, answer: 'http', closesConnection: true },
  body_cut: { status: 400, rpcCode: RPC_ERRORS.invalidRequest, answer: 'http' },
  not_utf8: { status: 400, rpcCode: RPC_ERRORS.parseError, answer: 'http' },
  parse_error: { status: 400, rpcCode: RPC_ERRORS.parseError, answer: 'http' },
  invalid_request: { status: 400, rpcCode: RPC_ERRORS.invalidRequest, answer: 'http' },
  // The passthrough refuses a tools/call it cannot route (no params.name) before anything goes upstream.
  invalid_params: { status: 400, rpcCode: RPC_ERRORS.invalidParams, answer: 'http' },
  // The SDK-built servers answer a tools/call's params in-band, as the SDK's own server does.
  invalid_call_params: { status: 200, rpcCode: RPC_ERRORS.invalidParams, answer: 'in-band' },
  method_not_allowed: { status: 405, rpcCode: RPC_ERRORS.invalidRequest, answer: 'http' },
  // -32000 is what the SDK's transport answers a method it does not serve with (`/mcp`, `/mcp/p/platform`).
  sdk_method_not_allowed: { status: 405, rpcCode: -32000, answer: 'http' },
  unsupported_encoding: { status: 415, rpcCode: RPC_ERRORS.invalidRequest, answer: 'http', closesConnection: true },
  no_connector: { status: 404, rpcCode: RPC_ERRORS.invalidRequest, answer: 'http' },
  // MCP's 404 tells a client to start a new session.
  session_gone: { status: 404, rpcCode: RPC_ERRORS.invalidRequest, answer: 'http' },
  // A provider's 401 is not passed on as such: the caller's Authorization is its Plaza credential.
  upstream_credential_refused: { status: 403, rpcCode: RPC_ERRORS.invalidRequest, answer: 'http' },
  held_answers_full: { status: 200, rpcCode: RPC_ERRORS.internal, answer: 'in-band' },
  // The authorize hook's refusal (policy): a tools/call gets an isError result, receipted `refused`.
  call_refused: { status: 200, rpcCode: RPC_ERRORS.invalidRequest, answer: 'in-band' },
  // DNS-rebinding protection (gateway/origin-check.ts): a foreign Origin or Host. -32000 as the SDKs' own check answers.
  // The connection stays: a client still sending its (small) body would otherwise see a reset, not the 403.
  origin_refused: { status: 403, rpcCode: -32000, answer: 'http' },
  // MCP 2026-07-28's codes, with the HTTP 400 the spec gives each (the transport's own refusals).
  header_mismatch: { status: 400, rpcCode: RPC_ERRORS.headerMismatch, answer: 'http' },
  missing_client_capability: { status: 400, rpcCode: RPC_ERRORS.missingClientCapability, answer: 'http' },
  unsupported_protocol_version: { status: 400, rpcCode: RPC_ERRORS.unsupportedProtocolVersion, answer: 'http' },
  // A GET on /mcp that does not accept an event stream (the transport spec's 406), -32000 as the SDKs answer it.
  not_acceptable: { status: 406, rpcCode: -32000, answer: 'http' },
  // One more notification stream than an agent or the instance may hold open (notification-stream.ts).
  too_many_streams: { status: 429, rpcCode: -32000, answer: 'http', retryAfterS: '5' },
};

/** A refusal the gateway answers itself, by its row in GATEWAY_ERROR_TABLE. */
export class GatewayError extends Error {
  readonly code: GatewayErrorCode;
  /** The id of the one request the refusal is about, when the body was that request alone. */
  readonly id: JsonRpcId;

  constructor(code: GatewayErrorCode, message: string, id: JsonRpcId = null) {
    super(message);
    this.name = 'GatewayError';
    this.code = code;
    this.id = id;
  }

  get status(): number {
    return GATEWAY_ERROR_TABLE[this.code].status;
  }
}

/** The headers a refusal of `code` carries besides its body's (Retry-After, Connection: close). */
export function gatewayErrorHeaders(code: GatewayErrorCode): Record<string, string> {
  const row = GATEWAY_ERROR_TABLE[code];
  return {
    ...(row.retryAfterS === undefined ? {} : { 'retry-after': row.retryAfterS }),
    ...(row.closesConnection ? { connection: 'close' } : {}),
  };
}

/**
 * Answers `error` as the table has it: its status, a JSON-RPC error with its code under its id, and
 * its row's headers plus `headers` (an `Allow`, say, which differs per entry point).
 */
export function sendGatewayError(res: ServerResponse, error: GatewayError, headers: Record<string, string> = {}): void {
  sendJson(res, error.status, rpcError(error.id, GATEWAY_ERROR_TABLE[error.code].rpcCode, error.message), {
    ...gatewayErrorHeaders(error.code),
    ...headers,
  });
}
