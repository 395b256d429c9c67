/**
 * Sends a checked request upstream and hands the answer to the relay for its kind (a refusal,
 * an event stream, a JSON answer): the passthrough's one exchange with the provider.
 */
import { sendJson } from '../internal/send-json.ts';
import { describeUpstreamFailure } from '../internal/upstream-exchange.ts';
import type { UpstreamHttpResponse } from '../upstream-http.ts';
import { relayStreamAnswer } from './event-stream.ts';
import { CALLER_CANCELLED, type Exchange, type PassthroughDeps } from './exchange.ts';
import { relayJsonAnswer } from './json-answer.ts';
import { failedCall, failRequest } from './request-answers.ts';
import { endUnanswered } from './response-end.ts';
import { answerHeaders } from './session.ts';
import { createUpstreamControl } from './upstream-control.ts';
import { relayRefusal } from './upstream-refusal.ts';

/** Sends the request upstream and relays the answer as its kind asks. */
export async function forward(
  deps: PassthroughDeps,
  ex: Exchange,
  /** Open GET streams (server notifications), which a stream answer joins until it ends. */
  notificationStreams: Set<UpstreamHttpResponse>,
): Promise<void> {
  const { res, call } = ex;
  const { pipeline } = deps;
  const control = createUpstreamControl(deps, ex);
  let upstream: UpstreamHttpResponse;
  if (call) pipeline.forwarding(call);
  try {
    upstream = await deps.http(ex.connector.url, {
      method: ex.method,
      headers: ex.headers,
      body: ex.body,
      signal: control.signal,
    });
  } catch (error) {
    // Failed on its way (a timeout or a caller gone told the provider already).
    control.answered();
    control.answeredWhole();
    control.stopTimer();
    const why = control.cancelled ? CALLER_CANCELLED : describeUpstreamFailure(error);
    if (call) {
      await pipeline.record(call, { failure: why });
      sendJson(res, 200, failedCall(deps, ex, why));
    } else if (control.allCancelled) endUnanswered(res, {});
    else failRequest(ex, why, {}, 502);
    return;
  } finally {
    // The cancellation went upstream (under the call's id there); the call ends now, receipted
    // as cancelled, rather than wait for an answer the upstream will not send.
    for (const inCall of ex.cancelling) inCall.cancel();
  }
  const responseHeaders = answerHeaders(deps.sealer, ex, upstream);
  const type = upstream.header('content-type') ?? '';
  // Anything but an event stream is the provider's whole answer (or refusal) to the request.
  if (!type.startsWith('text/event-stream')) {
    control.answered();
    control.answeredWhole();
  }
  const ok = upstream.status >= 200 && upstream.status <= 299;
  if (!ok || upstream.status === 202 || upstream.status === 204)
    await relayRefusal(deps, ex, control, upstream, responseHeaders);
  else if (type.startsWith('text/event-stream')) {
    await relayStreamAnswer(deps, ex, control, {
      upstream,
      responseHeaders,
      upstreamSessionOut: upstream.header('mcp-session-id'),
      // Rechecked at the endpoint it was sent to (an OAuth token's audience).
      authenticate: (request) => pipeline.authenticate(request, { provider: ex.provider }),
      notificationStreams,
    });
  } else await relayJsonAnswer(deps, ex, control, upstream, responseHeaders);
}
