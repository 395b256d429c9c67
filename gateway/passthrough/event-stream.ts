/**
 * Relays an upstream event stream to a passthrough client. A POST's stream ends once every
 * request in it is answered — the spec has the server close it then — and the rest of the
 * upstream's stream is read in the background; a call's stream the upstream closes early is
 * resumed upstream (SEP-1699). A GET stream (server notifications), or a POST without requests,
 * lasts as long as the upstream's, and ends when its agent is revoked. How the stream is read and
 * resumed is stream-reading's.
 */
import type { IncomingMessage } from 'node:http';

import { AuthError, formatSseEvent } from '../../src/kernel/index.ts';
import type { AgentIdentity } from '../identity/agin-card.ts';
import { IDENTITY_HEADERS } from '../identity/stamp.ts';
import { guardDrain } from '../internal/answer-writer.ts';
import type { UpstreamHttpResponse } from '../upstream-http.ts';
import { createEventRelay } from './event-relay.ts';
import { CALLER_CANCELLED, type Exchange, type PassthroughDeps } from './exchange.ts';
import { failedCall, failedRequests } from './request-answers.ts';
import { createSseWriter } from './sse-writer.ts';
import { readResuming, type Resume } from './stream-reading.ts';
import type { UpstreamControl } from './upstream-control.ts';

/** How often an open GET stream checks that its agent is still allowed (revocation ends it). */
const REVOCATION_RECHECK_MS = 1_000;

/** What relayStreamAnswer needs besides the exchange. */
export interface StreamAnswer {
  upstream: UpstreamHttpResponse;
  responseHeaders: Record<string, string>;
  /** The session the upstream's answer named, if any (a resume goes in it). */
  upstreamSessionOut: string | undefined;
  authenticate: (req: IncomingMessage) => Promise<AgentIdentity>;
  /** The open GET streams, which a stopping server ends. */
  notificationStreams: Set<UpstreamHttpResponse>;
}

/** Relays the upstream's event stream answer (see the file's comment). */
export async function relayStreamAnswer(
  deps: PassthroughDeps,
  ex: Exchange,
  control: UpstreamControl,
  answer: StreamAnswer,
): Promise<void> {
  const { req, method } = ex;
  const { upstream } = answer;
  if (method !== 'POST') control.stopTimer();
  // A stream the client keeps open (server notifications, sampling requests) outlives the
  // request that checked the credential: the agent is checked again every second, and the
  // stream ends once it is revoked (the check is as fresh as every instance's, within 5 s).
  // One check at a time: while the database is slow, ticks do not pile queries up.
  let checking = false;
  const recheck =
    method === 'GET'
      ? setInterval(() => {
          if (checking) return;
          checking = true;
          answer
            .authenticate(req)
            .catch((error: unknown) => {
              if (error instanceof AuthError) upstream.discard();
            })
            .finally(() => (checking = false));
        }, REVOCATION_RECHECK_MS)
      : undefined;
  recheck?.unref();
  if (method === 'GET') answer.notificationStreams.add(upstream);
  try {
    // A GET stream carries no answers unless it resumes a POST's stream (Last-Event-ID).
    const resumed = method === 'GET' && typeof req.headers['last-event-id'] === 'string';
    // A POST's stream is resumed in the session it went in (or the one its answer opened).
    const resumeHeaders = (lastEventId: string): Record<string, string> => {
      const out: Record<string, string> = { ...ex.headers, accept: 'text/event-stream', 'last-event-id': lastEventId };
      delete out['content-type'];
      delete out[IDENTITY_HEADERS.callId];
      delete out[IDENTITY_HEADERS.assertion];
      const session = answer.upstreamSessionOut ?? ex.upstreamSession;
      if (session !== undefined) out['mcp-session-id'] = session;
      return out;
    };
    const resume: Resume | undefined =
      method === 'POST'
        ? {
            open: (lastEventId) =>
              deps.http(ex.connector.url, {
                method: 'GET',
                headers: resumeHeaders(lastEventId),
                signal: control.signal,
              }),
            signal: control.signal,
            // The provider may still be working on the call the gateway no longer waits for. (Not
            // the caller's leaving: a tasks/result beside it is not the caller's to lose, and gets its error.)
            abandon: (why) => control.abandon(why),
          }
        : undefined;
    await relayEventStream(deps, ex, control, { upstream, headers: answer.responseHeaders, resumed, resume });
  } finally {
    control.stopTimer();
    clearInterval(recheck);
    answer.notificationStreams.delete(upstream);
  }
}

/**
 * Relays an upstream event stream (see the file's comment): reads it, resuming a call's stream
 * the upstream closed early, then answers in-band whatever the stream left unanswered.
 */
async function relayEventStream(
  deps: PassthroughDeps,
  ex: Exchange,
  control: UpstreamControl,
  stream: {
    upstream: UpstreamHttpResponse;
    headers: Record<string, string>;
    resumed: boolean;
    resume: Resume | undefined;
  },
): Promise<void> {
  const { res, call, awaited } = ex;
  const endsWithAnswers = awaited.size > 0;
  const writer = createSseWriter(
    res,
    { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', ...stream.headers },
    endsWithAnswers,
  );
  // A client that takes nothing of what was written for the write timeout is cut (its stream with it).
  guardDrain(res, deps.writeTimeoutMs);
  const events = createEventRelay(deps, ex, control, writer, stream.resumed);
  const failure = await readResuming(deps, ex, {
    writer,
    events,
    upstream: stream.upstream,
    resume: stream.resume,
    endsWithAnswers,
  });
  if (call && !events.answered) {
    const why = control.cancelled ? CALLER_CANCELLED : (failure ?? 'the upstream closed the stream before the result');
    await deps.pipeline.record(call, { failure: why });
    // A cancelled request gets no answer (the caller has stopped waiting for one).
    if (!control.cancelled)
      writer.add(formatSseEvent({ event: 'message', data: JSON.stringify(failedCall(deps, ex, why)) }));
  }
  // The POST's other requests the stream ended without answering get an error each, in-band
  // (also when it ended because the call beside them was cancelled).
  if (endsWithAnswers && awaited.size > 0) {
    const why = control.cancelled
      ? 'the call sent with it was cancelled, which ended the request upstream'
      : (failure ?? 'the upstream closed the stream before answering');
    for (const error of failedRequests(ex, awaited, why))
      writer.add(formatSseEvent({ event: 'message', data: JSON.stringify(error) }));
  }
  writer.end();
}
