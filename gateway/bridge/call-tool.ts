/**
 * A bridged tools/call: the gateway's call pipeline (authorize, call id, AGIN card and assertion,
 * receipt, stamped result) as any passthrough call, sent in the provider's revision; a tool asking
 * for `Mcp-Param-*` headers is asked again with them (see tool-schema), and one asking for the
 * client's input gets it (see input-rounds; held-rounds for a 2025 provider's requests to a
 * 2026-07-28 client).
 */
import type { CallOutcome, CallPipeline } from '../call-pipeline.ts';
import { stampCallParams, UPSTREAM_AUTHORIZATION_HEADER } from '../identity/stamp.ts';
import { type JsonRpcId, type JsonRpcResponse, RPC_ERRORS, rpcError } from '../internal/json-rpc.ts';
import { callSecrets } from '../internal/receipt-redaction.ts';
import { upstreamRequestHeaders } from '../passthrough/upstream-request.ts';
import { type CallContext, MAX_TOOL_NAME_LENGTH } from '../receipt-sink.ts';
import type { PooledCall } from '../upstream/pooled-call.ts';
import type { BridgeAnswer } from './answer.ts';
import { type BridgeDeps, type BridgedRequest, type BridgeSide, failure, send, withInput } from './exchange.ts';
import { holdRounds } from './held-rounds.ts';
import { keptToolSchema, refusesParamHeaders, toolSchema } from './tool-schema.ts';

/** Calls the tool and answers the call (see the file's comment). */
export async function callTool(
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
  const running = { deps, request, side, answer, call, name, headers };
  if (!side.rounds) return finish(await sendAndSettle(running, undefined));
  // A 2026-07-28 client of a 2025 provider: the provider's requests to its client become rounds.
  const rounds = holdRounds(deps, { provider, agentId: identity.agentId });
  void sendAndSettle(running, (r) => rounds.onServerRequest(r)).then(
    (settled) => rounds.done(settled),
    () => rounds.done(rpcError(request.id, RPC_ERRORS.internal, 'The call failed.')),
  );
  const outcome = await rounds.first;
  if (outcome === undefined)
    return finish(rpcError(request.id, RPC_ERRORS.internal, 'Upstream failed: no answer in time.'));
  finish('done' in outcome ? outcome.done : inputRound(request.id, outcome.input));
}

/** Sends the call (asked again with Mcp-Param-* headers or the client's input when the provider needs them), records its receipt and stamps its answer. */
async function sendAndSettle(
  running: {
    deps: BridgeDeps;
    request: BridgedRequest;
    side: BridgeSide;
    answer: BridgeAnswer;
    call: CallContext;
    name: string;
    headers: Record<string, string>;
  },
  onServerRequest: PooledCall['onServerRequest'],
): Promise<JsonRpcResponse> {
  const { deps, request, side, answer, call, name, headers } = running;
  const { pipeline } = deps;
  const { identity, connector } = request;
  const stamped = stampCallParams(request.params, identity, call.callId);
  let toolInputSchema = keptToolSchema(connector.url, name);
  const sendCall = (params: Record<string, unknown>) =>
    send(deps, request, side, answer, { params, headers, toolInputSchema, onServerRequest });
  let response: JsonRpcResponse | { refused: string };
  try {
    response = await sendCall(stamped);
    // A 2026-07-28 tool whose schema marks arguments for Mcp-Param-* headers: asked again with them.
    if (refusesParamHeaders(response)) {
      toolInputSchema = await schemaOf(deps, request, name);
      if (toolInputSchema !== undefined) response = await sendCall(stamped);
    }
    response = await withInput(deps, request, side, answer, response, sendCall, stamped);
  } catch (error) {
    return settle(pipeline, call, { failure: failure(error) }, request.id);
  }
  if ('refused' in response) return settle(pipeline, call, { failure: response.refused }, request.id);
  if (response.error) {
    await pipeline.record(call, { error: response.error });
    return { jsonrpc: '2.0', id: request.id, error: response.error };
  }
  const adapted = side.result((response.result ?? {}) as Record<string, unknown>, request.method);
  return { jsonrpc: '2.0', id: request.id, result: await pipeline.settle(call, { result: adapted }, adapted) };
}

/** The `input_required` result a round's client gets. */
function inputRound(
  id: JsonRpcId,
  input: { inputRequests: Record<string, unknown>; requestState: string },
): JsonRpcResponse {
  return { jsonrpc: '2.0', id, result: { resultType: 'input_required', ...input } };
}

/** The tool's input schema from the provider's tools/list, listed as any request that is not a call (no call id or assertion). */
async function schemaOf(
  deps: BridgeDeps,
  request: BridgedRequest,
  name: string,
): Promise<Record<string, unknown> | undefined> {
  const { connector } = request;
  const headers = await upstreamRequestHeaders(deps.pipeline, {
    req: request.req,
    identity: request.identity,
    call: undefined,
    audience: connector.url,
    upstreamSession: undefined,
  });
  return toolSchema(deps.pool, { url: connector.url, revisions: connector.protocolVersions, headers }, name);
}

/** Records a call that failed: its answer, an `isError` result saying why. */
async function settle(
  pipeline: CallPipeline,
  call: CallContext,
  outcome: Extract<CallOutcome, { failure: string }>,
  id: JsonRpcId,
): Promise<JsonRpcResponse> {
  const text = `Call failed: ${outcome.failure}.`;
  const result = await pipeline.settle(call, outcome, { content: [{ type: 'text', text }], isError: true });
  return { jsonrpc: '2.0', id, result };
}
