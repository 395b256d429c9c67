/**
 * How a passthrough request's time upstream ends: its timeout, its caller leaving, its caller's
 * cancellation (here or on another instance), and the notifications/cancelled the upstream is
 * sent so that it does not work on for nobody.
 */
import { IDENTITY_HEADERS } from '../identity/stamp.ts';
import { callIdKey, callKey } from '../internal/calls-in-flight.ts';
import { CALLER_CANCELLED, type Exchange, type PassthroughDeps } from './exchange.ts';
import { whenClosed } from './response-end.ts';

/** One request's hold on its upstream exchange (see createUpstreamControl). */
export interface UpstreamControl {
  /** Aborts the upstream request: the timeout, the caller gone, the caller's cancellation. */
  readonly signal: AbortSignal;
  /** The caller cancelled the call (notifications/cancelled). */
  readonly cancelled: boolean;
  /** Every request this POST still waited for was a tasks/result the caller cancelled: it ends with no answer. */
  readonly allCancelled: boolean;
  /** The upstream answered the call (or the caller's own cancellation went to it): it is told nothing more. */
  answered(): void;
  /** The upstream's whole answer came (not an event stream): none of this POST's requests is pending there. */
  answeredWhole(): void;
  /** Ends the timeout (the answer came, or a GET stream is open). */
  stopTimer(): void;
  /** Sends the upstream a notifications/cancelled for its request `requestId`, in this session. */
  notice(requestId: string, reason: string): void;
  /** The gateway gave up on the call's stream: the upstream is told, once (not a tasks/result beside it). */
  abandon(why: string): void;
}

/**
 * Starts the request's timeout and listens for its caller leaving or cancelling. A call the
 * gateway stops waiting for (its time is up, or its caller left) is cancelled upstream too, in the
 * call's session and under its upstream id: on streamable HTTP a cut connection is no
 * cancellation, and the provider would work on for nobody. Once per call, and never once the
 * provider has answered it (the answer is being receipted and sent); a caller's own
 * notifications/cancelled is passed on with its POST instead.
 */
export function createUpstreamControl(deps: PassthroughDeps, ex: Exchange): UpstreamControl {
  const { res, call, taskResults, awaited, upstreamSession } = ex;
  // A POST's whole answer (JSON or SSE) must arrive within the timeout; a GET stream (server
  // notifications) may stay open, so only its headers are timed.
  const controller = new AbortController();
  let upstreamTold = false;
  let answeredWhole = false;
  let cancelled = false;
  let allCancelled = false;
  const notice = (requestId: string, reason: string) => {
    const text = JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId, reason } });
    const headers: Record<string, string> = { ...ex.headers, 'content-type': 'application/json' };
    delete headers[IDENTITY_HEADERS.callId];
    delete headers[IDENTITY_HEADERS.assertion];
    deps
      .http(ex.connector.url, { method: 'POST', headers, body: text, signal: AbortSignal.timeout(deps.timeoutMs) })
      .then(
        (answer) => answer.discard(),
        () => undefined,
      );
  };
  const tellUpstream = (reason: string) => {
    if (upstreamSession === undefined) return;
    // The tasks/result requests the provider has not answered yet (and the caller not cancelled) are told of too.
    for (const request of taskResults.values()) {
      if (answeredWhole || request.cancelled || !awaited.has(request.resultCallId)) continue;
      request.cancelled = true;
      notice(request.resultCallId, reason);
    }
    if (upstreamTold || !call) return;
    upstreamTold = true;
    notice(call.callId, reason);
  };
  const timer = setTimeout(() => {
    tellUpstream(`the gateway stopped waiting: no answer within ${deps.timeoutMs} ms`);
    controller.abort(new DOMException('timeout', 'TimeoutError'));
  }, deps.timeoutMs);
  whenClosed(res, () => {
    // 'close' comes after every answer too; only a client that left before it matters.
    if (res.writableFinished) return;
    tellUpstream('the caller went away');
    controller.abort(new DOMException('client went away', 'AbortError'));
  });
  // Every call is kept under its call id, so a resume of its stream ends it (see the GET in
  // createPassthrough); in a session also under the caller's id, which a notifications/cancelled names.
  if (call) {
    const entry = {
      upstreamId: call.callId,
      cancelSent: () => {
        upstreamTold = true;
      },
      cancel: () => {
        cancelled = true;
        upstreamTold = true;
        controller.abort(new DOMException(CALLER_CANCELLED, 'AbortError'));
      },
    };
    // A cancellation that reached another instance: the upstream is told here, where the
    // call's upstream id, session and credentials are known, and the call ends as above.
    const fromElsewhere = () => {
      tellUpstream(CALLER_CANCELLED);
      entry.cancel();
    };
    const releases = [deps.inFlight.add(callIdKey(call.callId), entry, fromElsewhere)];
    if (upstreamSession !== undefined)
      releases.push(
        deps.inFlight.add(
          callKey(ex.provider, ex.identity.agentId, upstreamSession, ex.callRpcId),
          entry,
          fromElsewhere,
        ),
      );
    whenClosed(res, () => releases.forEach((release) => release()));
  }
  if (upstreamSession !== undefined && taskResults.size > 0) {
    // One 'close' listener for the whole batch, however many tasks/result requests it holds.
    const releases: (() => void)[] = [];
    for (const request of taskResults.values()) {
      // A tasks/result the caller cancels (wherever the cancellation arrived; the upstream
      // knows it by its call id) gets no answer: one that comes anyway is not passed on. The
      // POST ends once nothing else in it is awaited; a call beside it goes on.
      const entry = {
        upstreamId: request.resultCallId,
        cancelSent: () => undefined,
        cancel: () => {
          if (request.cancelled) return;
          request.cancelled = true;
          awaited.delete(request.resultCallId);
          if (awaited.size > 0) return;
          allCancelled = true;
          controller.abort(new DOMException(CALLER_CANCELLED, 'AbortError'));
        },
      };
      const release = deps.inFlight.add(
        callKey(ex.provider, ex.identity.agentId, upstreamSession, request.callerId),
        entry,
        () => {
          notice(request.resultCallId, CALLER_CANCELLED);
          entry.cancel();
        },
      );
      releases.push(release);
    }
    whenClosed(res, () => releases.forEach((release) => release()));
  }
  return {
    signal: controller.signal,
    get cancelled() {
      return cancelled;
    },
    get allCancelled() {
      return allCancelled;
    },
    answered: () => {
      upstreamTold = true;
    },
    answeredWhole: () => {
      answeredWhole = true;
    },
    stopTimer: () => clearTimeout(timer),
    notice,
    abandon: (why) => {
      if (upstreamTold || !call) return;
      upstreamTold = true;
      notice(call.callId, `the gateway stopped waiting: ${why}`);
    },
  };
}
