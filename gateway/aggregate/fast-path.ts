/**
 * The hot path of `/mcp`: a plain tools/call (either revision, see plainToolCall) answered as JSON
 * without an SDK server, its answer's bytes held and written as the client reads them.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

import { CallToolResultSchema, ErrorCode } from '@modelcontextprotocol/sdk/types.js';

import type { BridgeSession } from '../bridge/bridge-session.ts';
import { askClient, type InputWaiters, waiterKey } from '../bridge/input-waiters.ts';
import type { AnswerHold, HeldAnswers } from '../held-answers.ts';
import type { AgentIdentity } from '../identity/agin-card.ts';
import { writeHeldAnswer } from '../internal/answer-writer.ts';
import { rpcError } from '../internal/json-rpc.ts';
import { sendJson } from '../internal/send-json.ts';
import { callTool, type ToolCallDeps, type ToolCallExtra } from './call-tool.ts';
import { CallCancelled, type Cancellations } from './cancellation.ts';
import { asksAnything } from './client-asks.ts';
import { AGGREGATE_SESSION } from './client-session.ts';
import { type LazyStream, lazyStream } from './lazy-stream.ts';
import type { PlainToolCall } from './messages.ts';
import { whenClosed } from './methods.ts';
import { CallerRpcError } from './relayed-error.ts';
import { missingCapabilities, type RequestStates } from './request-state.ts';

/** What the fast path uses. */
export interface FastPathDeps {
  tools: ToolCallDeps;
  held: HeldAnswers;
  cancellations: Cancellations;
  writeTimeoutMs: number;
  /** How an agent's multi-round-trip states are sealed; absent: no round trip crosses `/mcp`. */
  requestStates?: ((agentId: string) => RequestStates) | undefined;
  /** Where a call waits for its 2025 client's answers to the provider's requests (see client-asks). */
  waiters: InputWaiters;
  /** How long a call waits for such an answer (ms). */
  inputTimeoutMs: number;
}

/** The JSON-RPC code of a request whose declared client capabilities lack what its answer needs (2026-07-28). */
const MISSING_CLIENT_CAPABILITY = -32021;

/** Answers `call` for `identity` on `res`. */
export async function answerToolCall(
  fast: FastPathDeps,
  identity: AgentIdentity,
  req: IncomingMessage,
  res: ServerResponse,
  call: PlainToolCall,
  session?: BridgeSession,
): Promise<void> {
  const controller = new AbortController();
  // A 2026-07-28 client cancels by closing its request; a 2025 one by notifications/cancelled
  // (its disconnection alone is no cancellation, but nobody is left to answer).
  const onClose = () => controller.abort(call.modern ? new CallCancelled('the client closed the request') : undefined);
  res.on('close', onClose);
  const release = call.modern ? undefined : fast.cancellations.track(identity.agentId, call.id, controller);
  const hold = fast.held.open(identity.agentId);
  whenClosed(res, () => hold.release());
  // A 2025 caller gets the provider's log messages: the answer turns into an event stream at the
  // first one (a 2026-07-28 caller asks for them with a logLevel, which leaves the fast path).
  const stream = call.modern ? undefined : lazyStream(res, fast.writeTimeoutMs);
  /** Answers with `body` on the stream when it was opened (its status is sent already); false when it was not. */
  const onStream = (body: unknown): boolean => {
    if (!stream?.open) return false;
    const text = JSON.stringify(body);
    hold.keep(Buffer.byteLength(text));
    stream.end(text);
    return true;
  };
  try {
    const result = await callTool(fast.tools, identity, req, call.params, {
      signal: controller.signal,
      notify: stream ? (n) => stream.notify(n) : async () => undefined,
      hold,
      clientCapabilities: call.modern?.clientCapabilities,
      states: call.modern ? fast.requestStates?.(identity.agentId) : undefined,
      ...(session && stream ? sessionCall(fast, identity, req, res, stream, session) : {}),
    });
    if (call.modern && (result as Record<string, unknown>)['resultType'] === 'input_required') {
      writeInputRequired(fast, res, call, result as Record<string, unknown>, hold);
      return;
    }
    const valid = CallToolResultSchema.safeParse(result);
    const answer = valid.success
      ? { jsonrpc: '2.0', id: call.id, result: call.modern ? { ...valid.data, resultType: 'complete' } : valid.data }
      : rpcError(call.id, ErrorCode.InvalidParams, `Invalid tools/call result: ${valid.error.message}`);
    if (onStream(answer)) return;
    if (valid.success)
      writeHeldAnswer(
        res,
        { status: 200, headers: { 'content-type': 'application/json' }, text: JSON.stringify(answer) },
        hold,
        fast.writeTimeoutMs,
      );
    else sendJson(res, 200, answer);
  } catch (error) {
    if (error instanceof CallerRpcError) {
      const body = { jsonrpc: '2.0', id: call.id, error: error.error };
      if (!onStream(body)) sendJson(res, error.status, body);
      return;
    }
    // As the SDK's server answers a handler that throws (a receipt that could not be recorded no longer does: see receipted).
    const body = rpcError(call.id, ErrorCode.InternalError, error instanceof Error ? error.message : 'Internal error');
    if (!onStream(body)) sendJson(res, 200, body);
  } finally {
    release?.();
    res.off('close', onClose);
  }
}

/**
 * What a 2025 call in a session declares and can ask its client (see client-session), when the
 * client declared sampling, elicitation or roots: its capabilities, and its answers to requests on the call's event stream (when it takes
 * event streams), from whichever instance receives them.
 */
function sessionCall(
  fast: FastPathDeps,
  identity: AgentIdentity,
  req: IncomingMessage,
  res: ServerResponse,
  stream: LazyStream,
  session: BridgeSession,
): Pick<ToolCallExtra, 'clientCapabilities' | 'asks'> {
  // A client that declared none of them is refused at once, as one without a session.
  if (!asksAnything(session.capabilities)) return {};
  const streams = String(req.headers['accept'] ?? '').includes('text/event-stream');
  const gone = new AbortController();
  res.once('close', () => gone.abort());
  const ask = (method: string, params: unknown) =>
    askClient(
      fast.waiters,
      {
        key: (id) => waiterKey(AGGREGATE_SESSION, identity.agentId, id),
        timeoutMs: fast.inputTimeoutMs,
        signal: gone.signal,
        write: (message) => streams && stream.request(message),
      },
      method,
      params,
    );
  return { clientCapabilities: session.capabilities, asks: { capabilities: session.capabilities, ask } };
}

/**
 * A provider's `input_required` answer to a 2026-07-28 call, as SDK v2's server would answer it:
 * as it is when the client declared every capability its input requests need, else -32021 naming
 * the missing ones (the call's receipt records what the provider answered).
 */
function writeInputRequired(
  fast: FastPathDeps,
  res: ServerResponse,
  call: PlainToolCall,
  result: Record<string, unknown>,
  hold: AnswerHold,
): void {
  const missing = missingCapabilities(result, call.modern?.clientCapabilities);
  const body =
    missing.length === 0
      ? { jsonrpc: '2.0', id: call.id, result }
      : {
          jsonrpc: '2.0',
          id: call.id,
          error: {
            code: MISSING_CLIENT_CAPABILITY,
            message: `Missing required client capability: ${missing.join(', ')}`,
            data: { requiredCapabilities: Object.fromEntries(missing.map((c) => [c, {}])) },
          },
        };
  writeHeldAnswer(
    res,
    { status: 200, headers: { 'content-type': 'application/json' }, text: JSON.stringify(body) },
    hold,
    fast.writeTimeoutMs,
  );
}
