/**
 * What a bridged request's steps share: the bridge's dependencies, how the client's revision
 * differs from the provider's, the request itself, and sending it through the upstream pool.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

import type { CallPipeline } from '../call-pipeline.ts';
import type { AgentIdentity } from '../identity/agin-card.ts';
import type { createCallsInFlight } from '../internal/calls-in-flight.ts';
import type { JsonRpcId, JsonRpcResponse } from '../internal/json-rpc.ts';
import { CALLER_CANCELLED, type Connector } from '../passthrough/exchange.ts';
import { upstreamRequestHeaders } from '../passthrough/upstream-request.ts';
import type { SessionSealer } from '../session-sealer.ts';
import type { PooledCall } from '../upstream/pooled-call.ts';
import { UpstreamCallError } from '../upstream-client.ts';
import type { UpstreamPool } from '../upstream-pool.ts';
import type { BridgeAnswer } from './answer.ts';
import { fulfilInput, isInputRequired } from './input-rounds.ts';
import { askClient, type InputWaiters, waiterKey } from './input-waiters.ts';

/** One passthrough request that crosses revisions: who asks, for which connector, in which session. */
export interface BridgedExchange {
  req: IncomingMessage;
  res: ServerResponse;
  identity: AgentIdentity;
  provider: string;
  connector: Connector;
  upstreamSession: string | undefined;
}

/** The headers a request that is not a call goes upstream with (the caller's that may go, the identity headers). */
export function identityHeaders(
  deps: { pipeline: CallPipeline },
  ex: Pick<BridgedExchange, 'req' | 'identity' | 'connector'>,
): Promise<Record<string, string>> {
  return upstreamRequestHeaders(deps.pipeline, {
    req: ex.req,
    identity: ex.identity,
    call: undefined,
    audience: ex.connector.url,
    upstreamSession: undefined,
  });
}

/** What the bridge's requests use. */
export interface BridgeDeps {
  pipeline: CallPipeline;
  pool: UpstreamPool;
  onCall: ((endpointId: string) => void) | undefined;
  /** Where a call waits for its client's answers (see input-waiters). */
  waiters: InputWaiters;
  /** How long Plaza waits for the provider, and for a client's answer. */
  timeoutMs: number;
  /** Seals a round's requestState (see held-rounds). */
  sealer: SessionSealer;
  /** The passthrough's calls in flight: a 2025 client's notifications/cancelled finds its request there (or on another instance). */
  inFlight: ReturnType<typeof createCallsInFlight>;
}

/** How a bridged client's revision differs from its provider's, as forwarding needs it. */
export interface BridgeSide {
  /** The client capabilities the request declares (a stateless request's envelope, or the pooled session's initialize). */
  clientCapabilities: Record<string, unknown>;
  /** A result of `method` as the client's revision has it (resultType, cache hints added or taken off). */
  result(result: Record<string, unknown>, method: string): Record<string, unknown>;
  /**
   * Set when the client asks in an earlier revision than the provider's: an `input_required`
   * result is then asked of it, request by request (see input-rounds), and `refused` says why one
   * could not be.
   */
  input?: { refused(why: string): string };
  /**
   * Set when the client asks in a later revision (2026-07-28) than the provider's: the provider's
   * requests to its client during a call become `input_required` rounds (see held-rounds).
   */
  rounds?: boolean;
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
  /** Where the client's notifications/cancelled for this request finds it (a 2025 client's; see callKey). */
  cancelKey?: string | undefined;
}

/** Through the pool, stopped when the client goes away. */
export async function send(
  deps: BridgeDeps,
  request: BridgedRequest,
  side: BridgeSide,
  answer: BridgeAnswer,
  sending: {
    params: unknown;
    headers: Record<string, string>;
    toolInputSchema?: Record<string, unknown> | undefined;
    onServerRequest?: PooledCall['onServerRequest'];
  },
): Promise<JsonRpcResponse> {
  const gone = clientGone(request.res);
  // The client's standard headers name its own revision and request: the pool sets the provider's.
  const { 'mcp-method': _method, 'mcp-name': _name, ...headers } = sending.headers;
  // Cancelled by the client (here or through another instance): the request's stream is closed,
  // which is the cancellation for a 2026-07-28 provider and ends a session's request too.
  let cancelled = false;
  const cancel = () => {
    cancelled = true;
    gone.abort();
  };
  const unlist =
    request.cancelKey === undefined
      ? undefined
      : deps.inFlight.add(request.cancelKey, { upstreamId: '', cancelSent: () => undefined, cancel }, cancel);
  try {
    return await deps.pool.request({
      url: request.connector.url,
      revisions: request.connector.protocolVersions,
      method: request.method,
      params: sending.params,
      headers,
      signal: gone.signal,
      clientCapabilities: side.clientCapabilities,
      ...(sending.toolInputSchema === undefined ? {} : { toolInputSchema: sending.toolInputSchema }),
      ...(sending.onServerRequest === undefined ? {} : { onServerRequest: sending.onServerRequest }),
      onNotification: (n) => answer.notify(n),
      refusal: side.refusal,
    });
  } catch (error) {
    if (cancelled) throw new UpstreamCallError(CALLER_CANCELLED);
    throw error;
  } finally {
    unlist?.();
    gone.release();
  }
}

/**
 * `response`, or — when it asks for the client's input and the client speaks an earlier revision —
 * the provider's answer once the client gave it (see input-rounds), or why it could not be had.
 */
export async function withInput(
  deps: BridgeDeps,
  request: BridgedRequest,
  side: BridgeSide,
  answer: BridgeAnswer,
  first: JsonRpcResponse,
  resend: (params: Record<string, unknown>) => Promise<JsonRpcResponse>,
  params: Record<string, unknown>,
): Promise<JsonRpcResponse | { refused: string }> {
  if (!isInputRequired(first)) return first;
  if (side.input === undefined) return { refused: 'the provider asked for input this client cannot be asked for' };
  const refusedBy = side.input;
  const outcome = await fulfilInput(first, {
    capabilities: side.clientCapabilities,
    ask: (method, askParams) => ask(deps, request, answer, method, askParams),
    resend: (inputResponses, requestState) =>
      resend({ ...params, inputResponses, ...(requestState === undefined ? {} : { requestState }) }),
  });
  return 'refused' in outcome ? { refused: refusedBy.refused(outcome.refused) } : outcome;
}

/** Asks the client `method` on the request's event stream, and waits for its answer (any instance may receive it). */
async function ask(
  deps: BridgeDeps,
  request: BridgedRequest,
  answer: BridgeAnswer,
  method: string,
  params: unknown,
): Promise<unknown> {
  const gone = clientGone(request.res);
  try {
    return await askClient(
      deps.waiters,
      {
        key: (id) => waiterKey(request.provider, request.identity.agentId, id),
        timeoutMs: deps.timeoutMs,
        signal: gone.signal,
        write: (message) => answer.request(message),
      },
      method,
      params,
    );
  } finally {
    gone.release();
  }
}

/** A signal that aborts when the client's response closes before it is finished. */
function clientGone(res: ServerResponse) {
  const controller = new AbortController();
  const onClose = () => {
    if (!res.writableFinished) controller.abort(new DOMException('The caller went away.', 'AbortError'));
  };
  res.once('close', onClose);
  return {
    signal: controller.signal,
    abort: () => controller.abort(),
    release: () => res.off('close', onClose),
  };
}

/** The progress token a request's `_meta` carries, if any. */
export function progressTokenOf(params: Record<string, unknown> | undefined): unknown {
  const meta = params?.['_meta'];
  return typeof meta === 'object' && meta !== null ? (meta as Record<string, unknown>)['progressToken'] : undefined;
}

/** Words for a failed upstream exchange. */
export function failure(error: unknown): string {
  return error instanceof UpstreamCallError ? error.message : 'the upstream call failed';
}
