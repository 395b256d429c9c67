/**
 * Relays an upstream's whole JSON answer to a passthrough request: read within the limits of
 * held-answers, only answers to what the POST asked, the call's answer stamped and receipted, task
 * results receipted, and an error in-band for each request left unanswered.
 */
import { nestsDeeperThan } from '../../src/kernel/index.ts';
import { AnswerDroppedError } from '../held-answers.ts';
import { writeHeldAnswer } from '../internal/answer-writer.ts';
import { firstAnswers, isResponse, MAX_JSON_DEPTH, parseJson, RPC_ERRORS, rpcError } from '../internal/json-rpc.ts';
import { sendJson } from '../internal/send-json.ts';
import { describeUpstreamFailure, readBodyText, UpstreamTooLargeError } from '../internal/upstream-exchange.ts';
import type { UpstreamHttpResponse } from '../upstream-http.ts';
import { onlyAsked } from './answer-filter.ts';
import { CALLER_CANCELLED, DROPPED, type Exchange, type PassthroughDeps } from './exchange.ts';
import {
  answerTask,
  answerTasks,
  errorForNone,
  failedCall,
  failedRequests,
  failRequest,
  stampOrFail,
  unanswered,
  whyUnanswered,
} from './request-answers.ts';
import { endUnanswered } from './response-end.ts';
import type { UpstreamControl } from './upstream-control.ts';

/** A whole JSON answer, held and written as held-answers has it. */
function sendHeld(deps: PassthroughDeps, ex: Exchange, text: string, headers: Record<string, string>): void {
  writeHeldAnswer(
    ex.res,
    { status: 200, headers: { 'content-type': 'application/json', ...headers }, text },
    ex.hold,
    deps.writeTimeoutMs,
  );
}

/** Relays the upstream's JSON answer (see the file's comment). */
export async function relayJsonAnswer(
  deps: PassthroughDeps,
  ex: Exchange,
  control: UpstreamControl,
  upstream: UpstreamHttpResponse,
  responseHeaders: Record<string, string>,
): Promise<void> {
  const { res, call } = ex;
  let text: string;
  try {
    text = await readBodyText(upstream, deps.maxResponse, (size) => {
      if (!ex.hold.set(size)) throw new AnswerDroppedError(deps.held.limits);
    });
    // Read whole: it will be delivered (or its connection cut), not let go for another.
    if (!ex.hold.keep() && !res.closed) throw new AnswerDroppedError(deps.held.limits);
  } catch (error) {
    control.stopTimer();
    const why =
      error instanceof UpstreamTooLargeError || error instanceof AnswerDroppedError
        ? error.message
        : control.cancelled
          ? CALLER_CANCELLED
          : describeUpstreamFailure(error);
    if (call) {
      await deps.pipeline.record(call, { failure: why });
      sendJson(res, 200, failedCall(deps, ex, why), responseHeaders);
    } else if (control.allCancelled) endUnanswered(res, responseHeaders);
    else failRequest(ex, why, responseHeaders, 200);
    return;
  }
  control.stopTimer();
  let parsed: unknown;
  try {
    parsed = parseJson(text);
  } catch {
    if (call) {
      await deps.pipeline.record(call, { failure: 'the upstream answered malformed JSON' });
      sendJson(res, 200, failedCall(deps, ex, 'the upstream answered malformed JSON'), responseHeaders);
    } else if (text === '' && ex.method !== 'POST') {
      // A GET or DELETE the upstream answered with nothing (a session ended): nothing to parse.
      res.writeHead(upstream.status, responseHeaders);
      res.end();
    } else if (text.trim() === '' && ex.asked.size === 0) {
      // Notifications or responses only, taken with a 200 and no body (older servers answer so,
      // where MCP asks for 202): accepted, and the client gets the 202 MCP has it expect.
      res.writeHead(202, responseHeaders);
      res.end();
    } else failRequest(ex, 'the upstream answered malformed JSON', responseHeaders, 200);
    return;
  }
  if (call) await relayCallAnswer(deps, ex, parsed, responseHeaders);
  else await relayOtherAnswers(deps, ex, parsed, text, responseHeaders);
}

/** A JSON answer to a POST without a call (or a GET, a DELETE). */
async function relayOtherAnswers(
  deps: PassthroughDeps,
  ex: Exchange,
  parsed: unknown,
  text: string,
  responseHeaders: Record<string, string>,
): Promise<void> {
  const kept = onlyAsked(parsed, ex.asked);
  // What the provider did not ask goes; each request it left unanswered gets an error.
  if (kept === DROPPED) {
    failRequest(ex, 'it answered no request of this POST', responseHeaders, 200);
    return;
  }
  const missing = unanswered(ex, kept);
  if (missing.length > 0 && !ex.batch) {
    failRequest(ex, whyUnanswered(kept), responseHeaders, 200);
    return;
  }
  if (kept !== parsed || missing.length > 0) {
    parsed = [...(Array.isArray(kept) ? kept : [kept]), ...failedRequests(ex, missing, whyUnanswered(kept))];
    text = JSON.stringify(parsed);
  }
  if (ex.taskResults.size > 0) {
    // A task's result never passes unreceipted, nor inside an answer too deep to look into.
    if (nestsDeeperThan(parsed, MAX_JSON_DEPTH))
      sendJson(
        ex.res,
        200,
        rpcError(null, RPC_ERRORS.internal, `Upstream failed: its answer nests deeper than ${MAX_JSON_DEPTH} levels.`),
        responseHeaders,
      );
    else {
      const answers = await answerTasks(deps, ex, parsed);
      if (answers === DROPPED) endUnanswered(ex.res, responseHeaders);
      else sendHeld(deps, ex, JSON.stringify(answers), responseHeaders);
    }
    return;
  }
  // Nothing to stamp: the upstream's JSON goes on as it came.
  sendHeld(deps, ex, text, responseHeaders);
}

/** A JSON answer to a POST with a call: the call's answer stamped and receipted, or a failed call. */
async function relayCallAnswer(
  deps: PassthroughDeps,
  ex: Exchange,
  parsed: unknown,
  responseHeaders: Record<string, string>,
): Promise<void> {
  const call = ex.call!;
  if (nestsDeeperThan(parsed, MAX_JSON_DEPTH)) {
    const why = `the upstream's answer nests deeper than ${MAX_JSON_DEPTH} levels`;
    await deps.pipeline.record(call, { failure: why });
    sendJson(ex.res, 200, failedCall(deps, ex, why), responseHeaders);
    return;
  }
  const kept = onlyAsked(parsed, ex.asked);
  const answer = async (m: unknown) => answerTask(deps, ex, await stampOrFail(deps, ex, m));
  // The first answer to each request counts (its receipt is the one kept); a second is dropped.
  const answered =
    kept === DROPPED
      ? DROPPED
      : Array.isArray(kept)
        ? (await Promise.all(firstAnswers(kept).map(answer))).filter((m) => m !== DROPPED)
        : await answer(kept);
  const missing = unanswered(ex, kept === DROPPED ? [] : kept);
  const others = failedRequests(ex, missing, whyUnanswered(kept));
  if (missing.includes(call.callId)) {
    // No answer for the call: the caller gets a failed call under its id, with the answers to
    // the POST's other requests (a JSON answer holds nothing else the caller could use).
    const why = errorForNone(kept) ?? 'the upstream answered without a result for the call';
    await deps.pipeline.record(call, { failure: why });
    const answers = [
      ...(Array.isArray(answered) ? answered : [answered]).filter((m) => isResponse(m) && m.id !== null),
      ...others,
      failedCall(deps, ex, why),
    ];
    sendHeld(deps, ex, JSON.stringify(ex.batch ? answers : answers.at(-1)), responseHeaders);
    return;
  }
  sendHeld(
    deps,
    ex,
    JSON.stringify(others.length > 0 ? [...(Array.isArray(answered) ? answered : [answered]), ...others] : answered),
    responseHeaders,
  );
}
