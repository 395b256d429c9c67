/**
 * Relays an upstream event stream to a passthrough client. A POST's stream ends once every
 * request in it is answered — the spec has the server close it then — and the rest of the
 * upstream's stream is read in the background; a call's stream the upstream closes early is
 * resumed upstream (SEP-1699). A GET stream (server notifications), or a POST without requests,
 * lasts as long as the upstream's, and ends when its agent is revoked.
 */
import type { IncomingMessage } from 'node:http';

import { AuthError, createSseParser, formatSseEvent } from '../../src/kernel/index.ts';
import { AnswerDroppedError } from '../held-answers.ts';
import type { AgentIdentity } from '../identity/agin-card.ts';
import { IDENTITY_HEADERS } from '../identity/stamp.ts';
import { guardDrain } from '../internal/answer-writer.ts';
import { MAX_FAILED_RESUMES, MAX_RESUMES, pause, reopenStream, resumeDelay } from '../internal/stream-resume.ts';
import { describeUpstreamFailure, drainRest, UpstreamTooLargeError } from '../internal/upstream-exchange.ts';
import type { UpstreamHttpResponse } from '../upstream-http.ts';
import { createEventRelay, type EventRelay } from './event-relay.ts';
import { CALLER_CANCELLED, type Exchange, type PassthroughDeps } from './exchange.ts';
import { failedCall, failedRequests } from './request-answers.ts';
import { drainedOrClosed } from './response-end.ts';
import { createSseWriter, type SseWriter } from './sse-writer.ts';
import type { UpstreamControl } from './upstream-control.ts';

/** How often an open GET stream checks that its agent is still allowed (revocation ends it). */
const REVOCATION_RECHECK_MS = 1_000;

/**
 * A POST's: how its stream is opened again upstream from an event id (a GET with Last-Event-ID),
 * the signal that ends the POST (its timeout, its caller gone or cancelling), and how the
 * upstream is told that the gateway gave up resuming (its requests are cancelled there).
 */
interface Resume {
  open: (lastEventId: string) => Promise<UpstreamHttpResponse>;
  signal: AbortSignal;
  abandon: (why: string) => void;
}

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

/** How far a relayed stream has been read, across its resumes. */
interface ReadState {
  /** Bytes read for a POST's answer (bounded as a whole), or since the last read that ended an event. */
  size: number;
  /** Bytes read upstream that may still wait in the parser as the start of an event (see hold). */
  unsettled: number;
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

/**
 * Reads the stream and each stream a resume opens, until the POST's requests are answered, the
 * stream ends for good, or the call is given up; returns why it failed, if it did. A call's stream
 * the upstream ended before the call's answer, once it had given an event id, is resumable
 * (SEP-1699: a server may close it to have its client poll): the gateway resumes it upstream itself
 * and goes on relaying on this same stream, so the caller gets the answer here as from any
 * provider. Without an event id the stream is lost, and so is the answer. (A POST without a call —
 * a tasks/result, say — is not resumed: its requests get their errors, and its client asks again.)
 */
async function readResuming(
  deps: PassthroughDeps,
  ex: Exchange,
  reading: {
    writer: SseWriter;
    events: EventRelay;
    upstream: UpstreamHttpResponse;
    resume: Resume | undefined;
    endsWithAnswers: boolean;
  },
): Promise<string | undefined> {
  const { events, resume } = reading;
  const state: ReadState = { size: 0, unsettled: 0 };
  let stream = reading.upstream;
  let resumes = 0;
  let failedResumes = 0;
  for (;;) {
    const { failure, tooLarge } = await readOne(deps, ex, { ...reading, stream, state });
    if (!ex.call || events.answered || !resume || resume.signal.aborted || tooLarge || events.lastEventId === undefined)
      return failure;
    const closed =
      failure === undefined
        ? 'the upstream closed the stream before the result'
        : `the stream from the upstream broke before the result (${failure})`;
    if (resumes >= MAX_RESUMES) {
      const why = `${closed} ${resumes + 1} times; Plaza stopped resuming it`;
      resume.abandon(why);
      return why;
    }
    let reopened: UpstreamHttpResponse | undefined;
    let refusal = '';
    while (!reopened && resumes < MAX_RESUMES && failedResumes < MAX_FAILED_RESUMES) {
      await pause(resumeDelay(events.retry, failedResumes), resume.signal);
      if (resume.signal.aborted) break;
      resumes++;
      const answer = await reopenStream(resume.open, events.lastEventId);
      if ('stream' in answer) reopened = answer.stream;
      else {
        failedResumes++;
        refusal = answer.failure;
        if (!answer.retryable) break;
      }
    }
    if (resume.signal.aborted) return describeUpstreamFailure(resume.signal.reason);
    if (!reopened) {
      const why = `${closed} and did not resume it (${refusal}) in ${failedResumes} ${failedResumes === 1 ? 'try' : 'tries'}`;
      resume.abandon(why);
      return why;
    }
    failedResumes = 0;
    stream = reopened;
  }
}

/** Reads one upstream stream to its end (or the POST's last answer); returns why it failed, and whether for its size. */
async function readOne(
  deps: PassthroughDeps,
  ex: Exchange,
  reading: {
    writer: SseWriter;
    events: EventRelay;
    stream: UpstreamHttpResponse;
    state: ReadState;
    endsWithAnswers: boolean;
  },
): Promise<{ failure: string | undefined; tooLarge: boolean }> {
  const { res, hold } = ex;
  const { writer, events, stream, state, endsWithAnswers } = reading;
  const parser = createSseParser();
  const decoder = new TextDecoder();
  const chunks = stream.body[Symbol.asyncIterator]();
  let tooLarge = false;
  try {
    for (;;) {
      // A client that reads slower than the upstream writes holds the upstream's stream with it:
      // nothing more is read until the client has taken what was written (or left), so a stream
      // nobody reads costs a socket's buffers, not the upstream's whole output in memory.
      if (res.writableNeedDrain) await drainedOrClosed(res, stream.body);
      // What is held now: the start of an event still in the parser, events not yet written, and
      // what waits in the response for the client (the rest has left).
      hold.set(state.unsettled + writer.pendingLength + res.writableLength);
      const next = await chunks.next();
      if (next.done) {
        await events.emit(parser.end());
        break;
      }
      // A POST's answer is bounded as a whole, across resumes. A stream that lasts as long as the
      // upstream's (GET notifications) is bounded per event: read no faster than its client, its
      // length costs no memory, and it may run for days. (Counted from the last read that ended an event.)
      state.size += next.value.length;
      if (state.size > deps.maxResponse) {
        stream.discard();
        tooLarge = true;
        throw new UpstreamTooLargeError(deps.maxResponse);
      }
      state.unsettled += next.value.length;
      if (!hold.set(state.unsettled + writer.pendingLength + res.writableLength)) {
        stream.discard();
        tooLarge = true;
        throw new AnswerDroppedError(deps.held.limits);
      }
      const parsed = parser.push(decoder.decode(next.value, { stream: true }));
      // An event ended in this read: every byte before it has left the parser as events, and at
      // most this read's bytes begin the next one.
      if (parsed.length > 0) state.unsettled = next.value.length;
      if (!endsWithAnswers && parsed.length > 0) state.size = 0;
      await events.emit(parsed);
      if (endsWithAnswers && ex.awaited.size === 0) {
        drainRest(chunks, stream);
        break;
      }
    }
  } catch (error) {
    return {
      failure:
        error instanceof UpstreamTooLargeError || error instanceof AnswerDroppedError
          ? error.message
          : describeUpstreamFailure(error),
      tooLarge,
    };
  }
  return { failure: undefined, tooLarge };
}
