/**
 * Sends one request of a bridged client to its provider through the upstream pool (which speaks
 * the provider's revision), and answers it in the client's: a tools/call takes the gateway's call
 * pipeline (authorize, call id, AGIN card and assertion, receipt, stamped result) as any
 * passthrough call does.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

import type { CallOutcome, CallPipeline } from '../call-pipeline.ts';
import type { AgentIdentity } from '../identity/agin-card.ts';
import { stampCallParams, UPSTREAM_AUTHORIZATION_HEADER, withoutPlatformMeta } from '../identity/stamp.ts';
import { type JsonRpcId, type JsonRpcResponse, RPC_ERRORS, rpcError } from '../internal/json-rpc.ts';
import { callSecrets } from '../internal/receipt-redaction.ts';
import type { Connector } from '../passthrough/exchange.ts';
import { upstreamRequestHeaders } from '../passthrough/upstream-request.ts';
import { type CallContext, MAX_TOOL_NAME_LENGTH } from '../receipt-sink.ts';
import { UpstreamCallError } from '../upstream-client.ts';
import type { UpstreamPool } from '../upstream-pool.ts';
import { type BridgeAnswer, bridgeAnswer } from './answer.ts';
import { keptToolSchema, refusesParamHeaders, toolSchema } from './tool-schema.ts';

/** What the bridge's requests use. */
export interface BridgeDeps {
  pipeline: CallPipeline;
  pool: UpstreamPool;
  onCall: ((endpointId: string) => void) | undefined;
}

/** How a bridged client's revision differs from its provider's, as forward needs it. */
export interface BridgeSide {
  /** The client capabilities the request declares (a stateless request's envelope, or the pooled session's initialize). */
  clientCapabilities: Record<string, unknown>;
  /** A result of `method` as the client's revision has it (resultType, cache hints added or taken off). */
  result(result: Record<string, unknown>, method: string): Record<string, unknown>;
  /** Why a result that asks the client for input (`input_required`) cannot reach it, or undefined when it can. */
  inputRequired(result: Record<string, unknown>): string | undefined;
  /** Why the provider's requests to its client during the call are refused, by method. */
  refusal(method: string): string;
  /** Headers the answer carries. */
  headers: Record<string, string>;
}

/** One request of a bridged client. */
export interface BridgedRequest {
  req: IncomingMessage;
  res: ServerResponse;
  identity: AgentIdentity;
  provider: string;
  connector: Connector;
  id: JsonRpcId;
  method: string;
  params: Record<string, unknown> | undefined;
}

/** Sends `request` upstream and answers it (see the file's comment). */
export async function forwardBridged(deps: BridgeDeps, request: BridgedRequest, side: BridgeSide): Promise<void> {
  const answer = bridgeAnswer(request.req, request.res, progressTokenOf(request.params));
  const finish = (response: JsonRpcResponse) =>
    answer.end(
      response.result !== undefined
        ? { ...response, result: side.result(response.result as Record<string, unknown>, request.method) }
        : response,
      side.headers,
    );
  if (request.method === 'tools/call') return callTool(deps, request, side, answer, finish);
  const headers = await upstreamRequestHeaders(deps.pipeline, {
    req: request.req,
    identity: request.identity,
    call: undefined,
    audience: request.connector.url,
    upstreamSession: undefined,
  });
  const sent = withoutPlatformMeta({ params: request.params }).params;
  let response: JsonRpcResponse;
  try {
    response = await send(deps, request, side, answer, sent, headers);
  } catch (error) {
    return finish(rpcError(request.id, RPC_ERRORS.internal, `Upstream failed: ${failure(error)}.`));
  }
  const result = response.result as Record<string, unknown> | undefined;
  const refused = result !== undefined ? side.inputRequired(result) : undefined;
  if (refused !== undefined) return finish(rpcError(request.id, RPC_ERRORS.internal, refused));
  finish({ ...response, id: request.id });
}

/** A tools/call, through the call pipeline (see the file's comment). */
async function callTool(
  deps: BridgeDeps,
  request: BridgedRequest,
  side: BridgeSide,
  answer: BridgeAnswer,
  finish: (response: JsonRpcResponse) => void,
): Promise<void> {
  const { pipeline } = deps;
  const { identity, provider, connector, req } = request;
  const name = request.params?.['name'];
  if (typeof name !== 'string' || name.length === 0 || name.length > MAX_TOOL_NAME_LENGTH)
    return finish(
      rpcError(
        request.id,
        RPC_ERRORS.invalidParams,
        `tools/call needs params.name of 1 to ${MAX_TOOL_NAME_LENGTH} characters.`,
      ),
    );
  const authorization = await pipeline.authorize({ identity, provider, method: 'tools/call', tool: name });
  const call = pipeline.open({
    identity,
    provider,
    tool: name,
    path: 'passthrough',
    secrets: callSecrets(req.headers[UPSTREAM_AUTHORIZATION_HEADER]),
  });
  if (!authorization.allowed) {
    const why = pipeline.refusal(authorization);
    await pipeline.record(call, { refused: why });
    return finish(pipeline.failed(call, request.id, `${why}; nothing was called.`));
  }
  const headers = await upstreamRequestHeaders(pipeline, {
    req,
    identity,
    call,
    audience: connector.url,
    upstreamSession: undefined,
  });
  deps.onCall?.(connector.endpointId);
  pipeline.forwarding(call);
  let response: JsonRpcResponse;
  const stamped = stampCallParams(request.params, identity, call.callId);
  try {
    response = await send(deps, request, side, answer, stamped, headers, keptToolSchema(connector.url, name));
    // A 2026-07-28 tool whose schema marks arguments for Mcp-Param-* headers: asked again with them.
    if (refusesParamHeaders(response)) {
      // Listed as any request that is not a call: without the call's id and assertion.
      const listing = await upstreamRequestHeaders(pipeline, {
        req,
        identity,
        call: undefined,
        audience: connector.url,
        upstreamSession: undefined,
      });
      const schema = await toolSchema(
        deps.pool,
        { url: connector.url, revisions: connector.protocolVersions, headers: listing },
        name,
      );
      if (schema !== undefined) response = await send(deps, request, side, answer, stamped, headers, schema);
    }
  } catch (error) {
    return settle(pipeline, call, { failure: failure(error) }, request.id, finish);
  }
  if (response.error) {
    await pipeline.record(call, { error: response.error });
    return finish({ jsonrpc: '2.0', id: request.id, error: response.error });
  }
  const result = (response.result ?? {}) as Record<string, unknown>;
  const refused = side.inputRequired(result);
  if (refused !== undefined) return settle(pipeline, call, { failure: refused }, request.id, finish);
  const adapted = side.result(result, request.method);
  finish({ jsonrpc: '2.0', id: request.id, result: await pipeline.settle(call, { result: adapted }, adapted) });
}

/** Records a call that failed, and answers it with an `isError` result saying why. */
async function settle(
  pipeline: CallPipeline,
  call: CallContext,
  outcome: Extract<CallOutcome, { failure: string }>,
  id: JsonRpcId,
  finish: (response: JsonRpcResponse) => void,
): Promise<void> {
  const text = `Call failed: ${outcome.failure}.`;
  const result = await pipeline.settle(call, outcome, { content: [{ type: 'text', text }], isError: true });
  finish({ jsonrpc: '2.0', id, result });
}

/** Through the pool, stopped when the client goes away. */
async function send(
  deps: BridgeDeps,
  request: BridgedRequest,
  side: BridgeSide,
  answer: BridgeAnswer,
  params: unknown,
  headers: Record<string, string>,
  toolInputSchema?: Record<string, unknown>,
): Promise<JsonRpcResponse> {
  const gone = new AbortController();
  const onClose = () => {
    if (!request.res.writableFinished) gone.abort(new DOMException('The caller went away.', 'AbortError'));
  };
  request.res.once('close', onClose);
  // The client's standard headers name its own revision and request: the pool sets the provider's.
  delete headers['mcp-method'];
  delete headers['mcp-name'];
  try {
    return await deps.pool.request({
      url: request.connector.url,
      revisions: request.connector.protocolVersions,
      method: request.method,
      params,
      headers,
      signal: gone.signal,
      clientCapabilities: side.clientCapabilities,
      ...(toolInputSchema === undefined ? {} : { toolInputSchema }),
      onNotification: (n) => answer.notify(n),
      refusal: side.refusal,
    });
  } finally {
    request.res.off('close', onClose);
  }
}

function progressTokenOf(params: Record<string, unknown> | undefined): unknown {
  const meta = params?.['_meta'];
  return typeof meta === 'object' && meta !== null ? (meta as Record<string, unknown>)['progressToken'] : undefined;
}

function failure(error: unknown): string {
  return error instanceof UpstreamCallError ? error.message : 'the upstream call failed';
}
