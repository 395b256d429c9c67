/**
 * Reads a passthrough call's upstream event stream into its relay: chunk by chunk, no faster than
 * the client takes it and within the answer limits, and opened again upstream when the provider
 * closes a call's stream early (SEP-1699). Apart from event-stream, which sets the relay up and
 * answers what the stream left unanswered.
 */
import { createSseParser } from '../../src/kernel/index.ts';
import { AnswerDroppedError } from '../held-answers.ts';
import { MAX_FAILED_RESUMES, MAX_RESUMES, pause, reopenStream, resumeDelay } from '../internal/stream-resume.ts';
import { describeUpstreamFailure, drainRest, UpstreamTooLargeError } from '../internal/upstream-exchange.ts';
import type { UpstreamHttpResponse } from '../upstream-http.ts';
import type { EventRelay } from './event-relay.ts';
import type { Exchange, PassthroughDeps } from './exchange.ts';
import { drainedOrClosed } from './response-end.ts';
import type { SseWriter } from './sse-writer.ts';

/**
 * A POST's: how its stream is opened again upstream from an event id (a GET with Last-Event-ID),
 * the signal that ends the POST (its timeout, its caller gone or cancelling), and how the
 * upstream is told that the gateway gave up resuming (its requests are cancelled there).
 */
export interface Resume {
  open: (lastEventId: string) => Promise<UpstreamHttpResponse>;
  signal: AbortSignal;
  abandon: (why: string) => void;
}

/** How far a relayed stream has been read, across its resumes. */
interface ReadState {
  /** Bytes read for a POST's answer (bounded as a whole), or since the last read that ended an event. */
  size: number;
  /** Bytes read upstream that may still wait in the parser as the start of an event (see hold). */
  unsettled: number;
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
export async function readResuming(
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
