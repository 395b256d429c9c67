/**
 * The answers a passthrough POST's requests get from the gateway: the call's answer stamped and
 * receipted, task results receipted, and an error in-band for each request the upstream failed.
 */
import {
  callAnswer,
  firstAnswers,
  isResponse,
  type JsonRpcId,
  type JsonRpcResponse,
  RECEIPT_UNRECORDED,
  RPC_ERRORS,
  rpcError,
} from '../internal/json-rpc.ts';
import { sendJson } from '../internal/send-json.ts';
import { answerTaskResult, rememberCreatedTask } from '../internal/task-results.ts';
import { completeResponse } from '../result-type.ts';
import { DROPPED, type Exchange, type PassthroughDeps } from './exchange.ts';

/**
 * Stamps the response to the call (under the caller's id again) and records its receipt; other
 * messages pass unchanged.
 */
async function answerCall(deps: PassthroughDeps, ex: CallAnswered, message: unknown): Promise<unknown> {
  const call = ex.call!;
  const { callRpcId } = ex;
  if (!isResponse(message) || message.id !== call.callId) return message;
  const { pipeline } = deps;
  const answer = callAnswer(message);
  if ('malformed' in answer) {
    await pipeline.record(call, { failure: answer.malformed });
    return failedCall(deps, ex, answer.malformed);
  }
  if ('error' in answer) {
    await pipeline.record(call, { error: answer.error });
    return { ...message, id: callRpcId ?? null };
  }
  await pipeline.record(call, { result: answer.result });
  // A task-augmented call answers with its task: the result comes later, through tasks/result,
  // stamped with this call's id then (the task is remembered before the answer leaves).
  await rememberCreatedTask(deps.tasks, call, answer.result);
  return { ...message, id: callRpcId ?? null, result: pipeline.stamp(call, answer.result) };
}

/**
 * Stamps the call's response, or — when its receipt cannot be recorded anywhere (neither the
 * database nor the spool took it) — answers an error: a result is never returned unreceipted.
 */
export async function stampOrFail(deps: PassthroughDeps, ex: CallAnswered, message: unknown): Promise<unknown> {
  try {
    return await answerCall(deps, ex, message);
  } catch {
    return plazaAnswer(deps, ex, RECEIPT_UNRECORDED);
  }
}

/** The POST's call (opened), the caller's id for it, and the revision it is answered in. */
export type CallAnswered = Pick<Exchange, 'call' | 'callRpcId' | 'revision'>;

/**
 * An answer to the POST's call that Plaza gives itself: an isError result with `text`, stamped like
 * any result, and `complete` for a client of 2026-07-28 (see completeResult).
 */
export function plazaAnswer(deps: PassthroughDeps, ex: CallAnswered, text: string): JsonRpcResponse {
  return completeResponse(deps.pipeline.failed(ex.call!, ex.callRpcId, text), ex.revision);
}

/** The answer to a call that failed: an isError result saying why (see plazaAnswer). */
export function failedCall(deps: PassthroughDeps, ex: CallAnswered, why: string): JsonRpcResponse {
  return plazaAnswer(deps, ex, `Call failed: ${why}.`);
}

/** The answer to a tasks/result of this POST, receipted (see answerTaskResult), or DROPPED; other messages as they are. */
export async function answerTask(deps: PassthroughDeps, ex: Exchange, message: unknown): Promise<unknown> {
  if (ex.taskResults.size === 0 || !isResponse(message) || typeof message.id !== 'string') return message;
  const request = ex.taskResults.get(message.id);
  if (!request) return message;
  // A cancelled request gets no answer.
  return request.cancelled
    ? DROPPED
    : answerTaskResult(message, request, {
        receipts: deps.receipts,
        clock: deps.pipeline.clock,
        identity: ex.identity,
        provider: ex.provider,
        arrivedAt: ex.arrivedAt,
        secrets: ex.secrets,
      });
}

/** A JSON answer without a call, its tasks/result answers receipted: the messages to send, or DROPPED for none. */
export async function answerTasks(deps: PassthroughDeps, ex: Exchange, parsed: unknown): Promise<unknown> {
  if (!Array.isArray(parsed)) return answerTask(deps, ex, parsed);
  if (parsed.length === 0) return parsed;
  const out = (await Promise.all(firstAnswers(parsed).map((m) => answerTask(deps, ex, m)))).filter(
    (m) => m !== DROPPED,
  );
  return out.length > 0 ? out : DROPPED;
}

/**
 * JSON-RPC errors for the requests of this POST other than its call that `ids` still holds
 * (under the caller's ids), saying what failed upstream: a request is answered in-band
 * whatever became of the upstream, never left to the client's timeout. A tasks/result the
 * caller cancelled gets none.
 */
export function failedRequests(
  ex: Pick<Exchange, 'call' | 'taskResults'>,
  ids: Iterable<JsonRpcId>,
  why: string,
): JsonRpcResponse[] {
  return [...ids].flatMap((id) => {
    if (ex.call && id === ex.call.callId) return [];
    const task = typeof id === 'string' ? ex.taskResults.get(id) : undefined;
    if (task?.cancelled) return [];
    return [rpcError(task ? task.callerId : id, RPC_ERRORS.internal, `Upstream failed: ${why}.`)];
  });
}

/**
 * Answers a request without a call whose upstream failed: a POST's requests get their errors;
 * a POST of notifications only, a GET or a DELETE one error with `status`.
 */
export function failRequest(ex: Exchange, why: string, headers: Record<string, string>, status: number): void {
  const errors = failedRequests(ex, ex.asked, why);
  if (errors.length > 0) sendJson(ex.res, 200, errors.length === 1 && !ex.batch ? errors[0] : errors, headers);
  else sendJson(ex.res, status, rpcError(null, RPC_ERRORS.internal, `Upstream failed: ${why}.`), headers);
}

/** The ids of this POST's requests (upstream ids) that `answers` holds no answer for. */
export function unanswered(ex: Exchange, answers: unknown): JsonRpcId[] {
  const ids = new Set(
    (Array.isArray(answers) ? answers : [answers]).filter((m) => isResponse(m)).map((m) => (m as JsonRpcResponse).id),
  );
  return [...ex.asked].filter((id) => !ids.has(id));
}

/** The provider's error for no request (id null) among `answers`, as the reason requests went unanswered. */
export function errorForNone(answers: unknown): string | undefined {
  const anonymous = (Array.isArray(answers) ? answers : [answers]).find(
    (m) => isResponse(m) && m.id === null && m.error !== undefined,
  ) as JsonRpcResponse | undefined;
  const message = anonymous?.error?.message;
  return anonymous
    ? `the upstream answered an error for no request${typeof message === 'string' ? ` (${message.slice(0, 200)})` : ''}`
    : undefined;
}

/** Why requests of a POST went unanswered by `answers`. */
export function whyUnanswered(answers: unknown): string {
  return errorForNone(answers) ?? 'the upstream answered without answering it';
}
