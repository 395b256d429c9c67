/**
 * The MCP gateway: AGIN identity for every tools/call (card, `_meta.platform`, identity headers,
 * signed assertions). No Express here; src/ mounts what this module exposes.
 */
export type { AggregateOptions, CatalogConnector, CatalogTool, LocalProvider, ToolCatalog } from './aggregate.ts';
export { createAggregate, TOOL_NAME_SEPARATOR } from './aggregate.ts';
export type { AgentAuthenticator, AgentIdentity, AginCard } from './identity/agin-card.ts';
export type { AssertionClaims, AssertionKey } from './identity/assertion.ts';
export { ASSERTION_TTL_SECONDS, ASSERTION_TYP, signAssertion, verifyAssertion } from './identity/assertion.ts';
export type { PlatformCallMeta, PlatformResultMeta } from './identity/stamp.ts';
export { IDENTITY_HEADERS, receiptHint, stampCallParams, stampResult, UPSTREAM_AUTHORIZATION_HEADER, upstreamHeaders } from './identity/stamp.ts';
export type { SharedCalls } from './internal/calls-in-flight.ts';
export type { AnswerHold, HeldAnswerLimits, HeldAnswers } from './internal/held-answers.ts';
export { createHeldAnswers, DEFAULT_HELD_ANSWER_LIMITS, DEFAULT_WRITE_TIMEOUT_MS } from './internal/held-answers.ts';
export { bearerChallenge, RPC_ERRORS, rpcError, unsupportedEncoding } from './internal/json-rpc.ts';
export { BODY_REFUSED, readMessageBody } from './internal/request-body.ts';
export { loadServerSdk, serveOnce } from './internal/server-sdk.ts';
export type { TaskCall, TaskDirectory } from './internal/task-results.ts';
export { sendUnauthorized } from './internal/unauthorized.ts';
export type { UpstreamHttp, UpstreamHttpRequest, UpstreamHttpResponse } from './internal/upstream-http.ts';
export { createUpstreamHttp } from './internal/upstream-http.ts';
export type { Connector, ConnectorDirectory, Passthrough, PassthroughOptions } from './passthrough.ts';
export { createPassthrough, MAX_TASK_RESULTS_PER_POST } from './passthrough.ts';
export type { CallContext, CallReceipt, ReceiptSink } from './receipt-sink.ts';
export { MAX_TOOL_NAME_LENGTH, receiptFor, recordCall, resultDigest } from './receipt-sink.ts';
export type { SessionClaims, SessionSealer } from './session-sealer.ts';
export { createSessionSealer } from './session-sealer.ts';
export type { GatewayPath } from './telemetry.ts';
export { CALL_METRICS, CALL_SPAN_NAME, GATEWAY_TELEMETRY_SCOPE, traceCall, traceCallEnd, traceUpstreamStart } from './telemetry.ts';
export type { UpstreamNotification } from './upstream-client.ts';
export type { PooledCall, UpstreamPool, UpstreamPoolOptions } from './upstream-pool.ts';
export { createUpstreamPool } from './upstream-pool.ts';
