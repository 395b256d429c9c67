/** A client resuming a call's stream that broke: the call is ended, and the client told so at once. */
import type { ServerResponse } from 'node:http';

import { formatSseEvent } from '../../src/kernel/index.ts';
import { GatewayError } from '../error-table.ts';
import type { AgentIdentity } from '../identity/agin-card.ts';
import { stampResult } from '../identity/stamp.ts';
import { type CallEventId, looksLikeCallEventId, readCallEventId } from '../internal/call-event-ids.ts';
import { callIdKey } from '../internal/calls-in-flight.ts';
import { RPC_ERRORS, rpcError, toolErrorResult } from '../internal/json-rpc.ts';
import type { PassthroughDeps } from './exchange.ts';

/** What a GET resuming with another stream's call event id (another agent's, connector's or session's) is told. */
const FOREIGN_EVENT_ID = 'Last-Event-ID names no stream of this session.';

/**
 * Answers a GET whose Last-Event-ID is one of a call's event ids, and returns true; false for any
 * other request. Only the stream's own agent, on its connector and in its session, resumes a call's
 * stream: any other GET presenting one of its ids (read off a log, a proxy, a shared transcript)
 * is refused, neither answered for the call nor sent upstream, where it names nothing.
 */
export function answerCallResume(
  deps: PassthroughDeps,
  res: ServerResponse,
  request: {
    lastEventId: string | string[] | undefined;
    provider: string;
    identity: AgentIdentity;
    upstreamSession: string | undefined;
  },
): boolean {
  const { lastEventId, provider, identity, upstreamSession } = request;
  if (typeof lastEventId !== 'string' || !looksLikeCallEventId(lastEventId)) return false;
  const resumingCall = readCallEventId(lastEventId, deps.sealer.sign, {
    provider,
    agentId: identity.agentId,
    upstreamSession,
  });
  if (!resumingCall) throw new GatewayError('invalid_request', FOREIGN_EVENT_ID);
  // The call may still run: its stream broke where this instance cannot see it (another
  // instance relays it, or has not yet noticed the broken connection). It is ended first —
  // the upstream told, the receipt `error` — so the answer below is true wherever it runs.
  deps.inFlight.end(callIdKey(resumingCall.callId));
  answerEndedCall(res, resumingCall, identity);
  return true;
}

/**
 * Answers a client that resumes a call's POST stream (its Last-Event-ID is one of
 * createCallEventIds'). That stream broke before the call's answer reached the client, which
 * ended the call (cancelled upstream, receipted `error`), and Plaza keeps no answer to replay: the
 * client gets the call's `isError` result under its own id at once, on a stream that then ends.
 * The SDK client takes it as its request's answer and stops resuming; a 404 would tell it that
 * the session is gone, and a stream held open would never bring anything.
 */
function answerEndedCall(res: ServerResponse, resuming: CallEventId, identity: AgentIdentity): void {
  const why = `Call failed: the connection to the caller was lost before the result reached it, and a call's stream cannot be resumed; its receipt (${resuming.callId}) says how the call ended.`;
  // A caller's id too long to name in an event id leaves nothing to answer under but null.
  const failed =
    resuming.callerId === null
      ? rpcError(null, RPC_ERRORS.invalidRequest, why)
      : toolErrorResult(resuming.callerId, why);
  const answer =
    failed.result === undefined ? failed : { ...failed, result: stampResult(failed.result, identity, resuming.callId) };
  const text = formatSseEvent({ event: 'message', data: JSON.stringify(answer) });
  res.writeHead(200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
}
