/**
 * MCP tasks on the passthrough: a task-augmented call's task is remembered (so the result fetched
 * later is stamped with the call's id on any instance), and every `tasks/result` answer carrying a
 * result is receipted before it goes back (docs/gateway.md).
 */
import { hash } from 'node:crypto';

import { type Clock, newId } from '../../src/kernel/index.ts';
import type { AgentIdentity } from '../identity/agin-card.ts';
import { stampResult } from '../identity/stamp.ts';
import { type CallContext, type ReceiptSink, recordTaskResult } from '../receipt-sink.ts';
import type { TaskCall, TaskDirectory } from '../task-directory.ts';
import { callAnswer, isRequest, type JsonRpcId, type JsonRpcResponse, toolErrorResult } from './json-rpc.ts';

/** A tasks/result request of a POST, as it goes upstream. */
export interface TaskResultRequest {
  /** The caller's id of the request: its answer goes back under it. */
  callerId: JsonRpcId;
  /** A call id: the request's id upstream, and the one its result's receipt is kept under. */
  resultCallId: string;
  /** `params.taskId` when it is a string. */
  taskId: string | undefined;
  /** The call of this agent, in this session, that created the task, when known. */
  creator: TaskCall | undefined;
  /** The caller cancelled it, or the gateway stopped waiting: its answer, if one comes, is not passed on. */
  cancelled: boolean;
}

/** Longest a task-creating call's answer waits for its task to be remembered. */
const TASK_REMEMBER_WAIT_MS = 1_000;

/** Where a task-augmented call's task is remembered: one key per provider, agent, upstream session and task. */
function taskKey(provider: string, agentId: string, upstreamSession: string, taskId: string): string {
  return hash('sha256', JSON.stringify([provider, agentId, upstreamSession, taskId]), 'hex');
}

/** The task id of a tools/call result that is a CreateTaskResult (MCP tasks), else undefined. */
function createdTaskId(result: unknown): string | undefined {
  const task = (result as { task?: { taskId?: unknown } } | null | undefined)?.task;
  return typeof task?.taskId === 'string' && task.taskId !== '' ? task.taskId : undefined;
}

/**
 * Remembers the task a call's result created, if it is a CreateTaskResult in an upstream session.
 * Waited for (so a tasks/result right after finds it), but never long: an unreachable database
 * must not hold the call's answer (the task's results are then receipted with their creator unknown).
 */
export async function rememberCreatedTask(
  tasks: TaskDirectory | undefined,
  call: CallContext,
  result: unknown,
): Promise<void> {
  const taskId = createdTaskId(result);
  if (taskId === undefined || !tasks || call.upstreamSession === undefined) return;
  const remembered = tasks
    .remember(taskKey(call.provider, call.identity.agentId, call.upstreamSession, taskId), {
      callId: call.callId,
      tool: call.tool,
    })
    .catch(() => undefined);
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    remembered,
    new Promise<void>((resolve) => (timer = setTimeout(resolve, TASK_REMEMBER_WAIT_MS))),
  ]);
  clearTimeout(timer);
}

/**
 * The tasks/result requests among a POST's `messages`, by the id each goes upstream under. A
 * task's result goes upstream under an id of the gateway's, the one its receipt will have, as a
 * call does: answered under the caller's id again, and known for what it is if the provider
 * replays it on another stream (never passed on there, unreceipted). The messages' ids and
 * `awaited` are rewritten in place. Their creating calls are looked up in one query (a batch may
 * hold thousands); a failed lookup finds none, and the results are receipted all the same.
 */
export async function takeTaskResults(
  messages: unknown[],
  context: {
    provider: string;
    agentId: string;
    upstreamSession: string | undefined;
    awaited: Set<JsonRpcId>;
    tasks: TaskDirectory | undefined;
    clock: Clock;
  },
): Promise<Map<string, TaskResultRequest>> {
  const { provider, agentId, upstreamSession, awaited, tasks, clock } = context;
  const taskResults = new Map<string, TaskResultRequest>();
  const keys = new Map<string, string>();
  for (const m of messages) {
    if (!isRequest(m) || m.method !== 'tasks/result') continue;
    const taskId = (m.params as { taskId?: unknown } | undefined)?.taskId;
    const request: TaskResultRequest = {
      callerId: m.id,
      resultCallId: newId('call', clock.now()),
      taskId: typeof taskId === 'string' ? taskId : undefined,
      creator: undefined,
      cancelled: false,
    };
    taskResults.set(request.resultCallId, request);
    if (request.taskId !== undefined && upstreamSession !== undefined)
      keys.set(request.resultCallId, taskKey(provider, agentId, upstreamSession, request.taskId));
    awaited.delete(m.id);
    awaited.add(request.resultCallId);
    m.id = request.resultCallId;
  }
  if (keys.size > 0 && tasks) {
    const found = await tasks.callsOf([...new Set(keys.values())]).catch(() => new Map<string, TaskCall>());
    for (const [id, key] of keys) taskResults.get(id)!.creator = found.get(key);
  }
  return taskResults;
}

/**
 * The answer to a tasks/result, under the caller's id again. A result is receipted before it
 * leaves — under the request's own call id, the tool of the call that created the task when
 * that was a call of this agent in this session (else the method's name), with an outcome that
 * names the task and that call — and stamped with the creating call's id (else its own) and
 * `result_call_id`, its receipt's. A malformed answer is receipted as a failure and answered as
 * one. A JSON-RPC error is receipted for a task of this agent's only (it carries no result).
 * A result whose receipt could be stored nowhere is not given out: the caller is told to ask
 * again (a task's result can be fetched until it expires).
 */
export async function answerTaskResult(
  message: JsonRpcResponse,
  request: TaskResultRequest,
  context: {
    receipts: ReceiptSink;
    clock: Clock;
    identity: AgentIdentity;
    provider: string;
    arrivedAt: number;
    secrets: readonly string[] | undefined;
  },
): Promise<JsonRpcResponse> {
  const { receipts, clock, identity, provider, arrivedAt, secrets } = context;
  const { callerId, resultCallId, taskId, creator } = request;
  const answer = callAnswer(message, 'tasks/result');
  if ('error' in answer && creator === undefined) return { ...message, id: callerId };
  const delivery: CallContext = {
    callId: resultCallId,
    identity,
    provider,
    tool: creator?.tool ?? 'tasks/result',
    startedAt: arrivedAt,
    secrets,
  };
  const outcome = 'malformed' in answer ? { failure: answer.malformed } : answer;
  const stampedId = creator?.callId ?? resultCallId;
  try {
    await recordTaskResult(receipts, delivery, { taskId, callId: creator?.callId }, outcome, clock.now());
  } catch {
    const refused = toolErrorResult(
      callerId,
      "The task's result arrived but Plaza could not record its receipt; ask for it again with tasks/result.",
    );
    return { ...refused, result: stampResult(refused.result, identity, stampedId) };
  }
  if ('error' in answer) return { ...message, id: callerId };
  const result =
    'result' in answer ? answer.result : toolErrorResult(callerId, `Task result failed: ${answer.malformed}.`).result;
  return { jsonrpc: '2.0', id: callerId, result: stampResult(result, identity, stampedId, resultCallId) };
}
