/**
 * The MCP gateway: AGIN identity for every tools/call (card, `_meta.platform`, identity headers,
 * signed assertions). No Express here; src/ mounts what this module exposes.
 */
export type { AggregateOptions, CatalogConnector, CatalogTool, LocalProvider, ToolCatalog } from './aggregate.ts';
export { createAggregate, TOOL_NAME_SEPARATOR } from './aggregate.ts';
export type { FanOutLimits } from './aggregate/fan-out.ts';
export { aggregateUri, providerUri } from './aggregate/resource-uri.ts';
export type {
  Authorization,
  Authorize,
  AuthorizeInput,
  CallOutcome,
  CallPipeline,
  CallPipelineOptions,
} from './call-pipeline.ts';
export { allowEveryCall, createCallPipeline } from './call-pipeline.ts';
export type { GatewayErrorCode, GatewayErrorRow } from './error-table.ts';
export { GATEWAY_ERROR_TABLE, GatewayError, gatewayErrorHeaders, sendGatewayError } from './error-table.ts';
export type { AnswerHold, HeldAnswerLimits, HeldAnswers } from './held-answers.ts';
export { createHeldAnswers, DEFAULT_HELD_ANSWER_LIMITS, DEFAULT_WRITE_TIMEOUT_MS } from './held-answers.ts';
export type { AgentAuthenticator, AgentIdentity, AginCard, GatewayEndpoint } from './identity/agin-card.ts';
export type { AssertionClaims, AssertionKey } from './identity/assertion.ts';
export { ASSERTION_TTL_SECONDS, ASSERTION_TYP, signAssertion, verifyAssertion } from './identity/assertion.ts';
export { authenticateRequest, bearerToken } from './identity/bearer.ts';
export type { CardTextRefusal } from './identity/card-text.ts';
export { cardText, cardTextDropping, RESERVED_OWNER_CONTEXTS, reservedOwnerContext } from './identity/card-text.ts';
export type { PlatformCallMeta, PlatformResultMeta } from './identity/stamp.ts';
export {
  IDENTITY_HEADERS,
  receiptHint,
  stampCallParams,
  stampResult,
  UPSTREAM_AUTHORIZATION_HEADER,
  upstreamHeaders,
} from './identity/stamp.ts';
export { RPC_ERRORS, rpcError } from './json-rpc-errors.ts';
export { claimedRevision, headerMismatch, isModernRevision } from './mcp-headers.ts';
export type { OriginCheck, OriginPolicy } from './origin-check.ts';
export { createOriginCheck, isLoopbackName, listensOnLoopback } from './origin-check.ts';
export type { Connector, ConnectorDirectory, Passthrough, PassthroughOptions } from './passthrough.ts';
export { createPassthrough, MAX_TASK_RESULTS_PER_POST } from './passthrough.ts';
export type { CallContext, CallReceipt, ReceiptSink } from './receipt-sink.ts';
export { MAX_TOOL_NAME_LENGTH, receiptFor, recordCall, resultDigest } from './receipt-sink.ts';
export { BODY_REFUSED, readMessageBody, unsupportedEncoding } from './request-body.ts';
export { completeResponse, completeResult } from './result-type.ts';
export type { ServerSdk } from './server-sdk.ts';
export { loadServerSdk, serveOnce } from './server-sdk.ts';
export type { ServerSdkV2 } from './server-sdk-v2.ts';
export { loadServerSdkV2, sendWebResponse, webRequest } from './server-sdk-v2.ts';
export type { SessionClaims, SessionSealer } from './session-sealer.ts';
export { createSessionSealer } from './session-sealer.ts';
export type { SharedCalls } from './shared-calls.ts';
export type { TaskCall, TaskDirectory } from './task-directory.ts';
export type { GatewayPath } from './telemetry.ts';
export {
  CALL_METRICS,
  CALL_SPAN_NAME,
  GATEWAY_TELEMETRY_SCOPE,
  traceCall,
  traceCallEnd,
  traceUpstreamStart,
} from './telemetry.ts';
export { bearerChallenge, InsufficientScopeError, sendUnauthorized } from './unauthorized.ts';
export type { UpstreamNotification } from './upstream-client.ts';
export type { UpstreamHttp, UpstreamHttpRequest, UpstreamHttpResponse } from './upstream-http.ts';
export { createUpstreamHttp } from './upstream-http.ts';
export type { PooledCall, UpstreamPool, UpstreamPoolOptions } from './upstream-pool.ts';
export { createUpstreamPool } from './upstream-pool.ts';
/** The revision the pool asks a session upstream for when the upstream's are not recorded (the bench calls upstreams in it too). */
export { DEFAULT_SESSION_REVISION } from './upstream/revisions.ts';
