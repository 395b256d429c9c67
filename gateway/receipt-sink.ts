import type { ReceiptInput, ReceiptStatus } from '../receipts/index.ts';
import type { AgentIdentity } from './identity/agin-card.ts';
import { clip, redactReceipt } from './internal/receipt-redaction.ts';
import { resultDigest } from './internal/result-digest.ts';
import { traceCallEnd } from './telemetry.ts';

export { resultDigest } from './internal/result-digest.ts';

/**
 * What the gateway records for one tools/call: the receipts module's own input (spec §2.6 plus
 * latency, digest and time), so a sink hands it to the writer as it is.
 */
export type CallReceipt = ReceiptInput;

/**
 * Where receipts go (the receipts module's writer). `record` resolves when the receipt is as
 * durable as configured: committed (sync) or queued (async).
 */
export interface ReceiptSink {
  record(receipt: CallReceipt): Promise<void>;
}

/** Longest tool name a receipt holds (the receipts module's limit): longer names are refused before any call. */
export const MAX_TOOL_NAME_LENGTH = 300;

/** A call in flight: everything its receipt needs but the outcome. */
export interface CallContext {
  callId: string;
  identity: AgentIdentity;
  provider: string;
  tool: string;
  startedAt: number;
  /** The upstream session the call runs in (passthrough): a task it creates belongs to it. */
  upstreamSession?: string | undefined;
  /**
   * The credential the caller sent for the provider (X-PLATFORM-Upstream-Authorization), whole and
   * without its scheme (see callSecrets): no receipt holds it, even when the provider's answer
   * quotes it. Never stored itself.
   */
  secrets?: readonly string[] | undefined;
  /**
   * What a request other than a tools/call was about (the URI of a resources/read, the name of a
   * prompts/get, as the provider knows them): its receipt's outcome names it.
   */
  subject?: string | undefined;
}

function firstText(result: Record<string, unknown>): string | undefined {
  const content = result['content'];
  if (!Array.isArray(content)) return undefined;
  const text = content.find(
    (c): c is { type: 'text'; text: string } =>
      typeof c === 'object' &&
      c !== null &&
      (c as { type?: unknown }).type === 'text' &&
      typeof (c as { text?: unknown }).text === 'string',
  );
  return text?.text;
}

/** The task of a CreateTaskResult (a task-augmented call's answer, MCP tasks), else undefined. */
function createdTask(result: Record<string, unknown>): { taskId: string; status: string } | undefined {
  const task = result['task'];
  if (task === null || typeof task !== 'object') return undefined;
  const { taskId, status } = task as { taskId?: unknown; status?: unknown };
  return typeof taskId === 'string' && taskId !== ''
    ? { taskId, status: typeof status === 'string' ? status : 'unknown' }
    : undefined;
}

/**
 * What a 2026-07-28 multi-round-trip answer asks of the client (`resultType` "input_required"):
 * the methods of its `inputRequests`, e.g. "elicitation/create", else undefined. Such an answer is
 * not the call's result: the client calls again with the inputs, and that call is receipted too.
 */
function inputRequests(result: Record<string, unknown>): string[] | undefined {
  if (result['resultType'] !== 'input_required') return undefined;
  const requests = result['inputRequests'];
  if (requests === null || typeof requests !== 'object') return [];
  return Object.values(requests).map((r) =>
    r !== null && typeof r === 'object' && typeof (r as { method?: unknown }).method === 'string'
      ? (r as { method: string }).method
      : 'unknown',
  );
}

/**
 * The receipt of a call, from its outcome: the provider's result or JSON-RPC error (`error`: the
 * provider answered, refusing the call), a `failure` of the upstream (no usable answer: refused
 * connection, timeout, 5xx, malformed, cut stream, the caller gone), or a call Plaza `refused`
 * before asking any provider (an unknown tool, arguments too deep; `code` `denied` or
 * `rate_limited` when the authorize hook refused it: the receipt's status), or a call the caller
 * `cancelled` (notifications/cancelled, or a 2026-07-28 client closing the request) that was told
 * upstream too.
 */
export function receiptFor(
  call: CallContext,
  outcome:
    | { result: unknown }
    | { error: { code: number; message: string } }
    | { failure: string }
    | { refused: string; code?: string | undefined }
    | { cancelled: string },
  now: number,
  /** A task's result (tasks/result) creates no task, whatever its fields look like. */
  kind: 'call' | 'task result' = 'call',
): CallReceipt {
  let status: ReceiptStatus;
  let text: string;
  let digestOf: unknown;
  if ('result' in outcome) {
    const result = (typeof outcome.result === 'object' && outcome.result !== null ? outcome.result : {}) as Record<
      string,
      unknown
    >;
    const isError = result['isError'] === true;
    status = isError ? 'error' : 'ok';
    const summary = firstText(result);
    // A read's contents and a prompt's messages count as a call's content does.
    const listed = result['content'] ?? result['contents'] ?? result['messages'];
    const items = Array.isArray(listed) ? listed.length : 0;
    const task = kind === 'call' ? createdTask(result) : undefined;
    const inputs = inputRequests(result);
    text = isError
      ? `tool error: ${clip(summary ?? 'no message', 200, call.secrets)}`
      : inputs
        ? `input required: the provider asks the client for ${inputs.length} input${inputs.length === 1 ? '' : 's'} (${clip([...new Set(inputs)].join(', '), 120, call.secrets)}); the client calls again with them`
        : task
          ? `task created: ${clip(task.taskId, 200, call.secrets)} (${clip(task.status, 40, call.secrets)}); its result comes with tasks/result`
          : `ok: ${items} content item${items === 1 ? '' : 's'}`;
    // A task that failed or was cancelled as it was created is no success.
    if (task && (task.status === 'failed' || task.status === 'cancelled')) status = 'error';
    const { _meta: _ignored, ...withoutMeta } = result;
    digestOf = withoutMeta;
  } else if ('error' in outcome) {
    status = 'error';
    text = `provider's json-rpc error ${String(outcome.error.code).slice(0, 40)}: ${clip(String(outcome.error.message), 200, call.secrets)}`;
    digestOf = { error: { code: outcome.error.code, message: outcome.error.message } };
  } else if ('cancelled' in outcome) {
    status = 'error';
    text = `cancelled: ${clip(outcome.cancelled, 200, call.secrets)}`;
    digestOf = { cancelled: outcome.cancelled };
  } else if ('refused' in outcome) {
    status = outcome.code === 'denied' || outcome.code === 'rate_limited' ? outcome.code : 'error';
    text = `refused by Plaza: ${clip(outcome.refused, 200, call.secrets)}`;
    digestOf = { refused: outcome.refused };
  } else {
    status = 'error';
    text = `upstream failure: ${clip(outcome.failure, 200, call.secrets)}`;
    digestOf = { failure: outcome.failure };
  }
  if (call.subject !== undefined) text = `${clip(call.subject, 200, call.secrets)}: ${text}`;
  return {
    callId: call.callId,
    aginId: call.identity.aginId,
    agentPrincipal: call.identity.agentPrincipal,
    accountId: call.identity.accountId,
    tool: call.tool,
    provider: call.provider,
    status,
    outcome: text,
    latencyMs: Math.max(0, Math.round(now - call.startedAt)),
    resultDigest: resultDigest(digestOf),
    time: now,
  };
}

/** The receipt of a call, or — the call ran — of its failure when its answer cannot be digested. */
function digestedReceipt(
  call: CallContext,
  outcome: Parameters<typeof receiptFor>[1],
  now: number,
  kind?: Parameters<typeof receiptFor>[3],
): CallReceipt {
  try {
    return receiptFor(call, outcome, now, kind);
  } catch (error) {
    return receiptFor(
      call,
      {
        failure: `Plaza could not digest the upstream's answer (${error instanceof Error ? error.message : String(error)})`,
      },
      now,
      kind,
    );
  }
}

/**
 * The one step every receipt takes to its sink: whatever built it, no text of it holds the
 * call's secrets (see receipt-redaction). Returns the receipt as stored.
 */
async function store(sink: ReceiptSink, call: CallContext, receipt: CallReceipt): Promise<CallReceipt> {
  const stored = redactReceipt(receipt, call.secrets);
  await sink.record(stored);
  return stored;
}

/**
 * Records the receipt of a task's result as it goes back to the caller (tasks/result, MCP tasks):
 * under `delivery`'s own call id and tool, with an outcome that names the task and the call that
 * created it (`callId`, when known). No span: the creating call had its own. Rethrows when the
 * receipt could be stored nowhere.
 */
export async function recordTaskResult(
  sink: ReceiptSink,
  delivery: CallContext,
  task: { taskId: string | undefined; callId: string | undefined },
  outcome: Parameters<typeof receiptFor>[1],
  now: number,
): Promise<CallReceipt> {
  const receipt = digestedReceipt(delivery, outcome, now, 'task result');
  const which =
    task.taskId === undefined
      ? 'result of a tasks/result without a task id'
      : `result of task ${clip(task.taskId, 200, delivery.secrets)}`;
  const creator =
    task.callId === undefined
      ? 'its creating call unknown to Plaza (not a call of this agent in this session)'
      : `created by call ${task.callId}`;
  receipt.outcome = `${which}, ${creator}: ${receipt.outcome}`;
  return store(sink, delivery, receipt);
}

/**
 * Builds the call's receipt, records it, and closes the call's span and metrics (outcome, receipt
 * id, latency). Rethrows when the receipt could be stored nowhere.
 */
export async function recordCall(
  sink: ReceiptSink,
  call: CallContext,
  outcome: Parameters<typeof receiptFor>[1],
  now: number,
): Promise<CallReceipt> {
  let receipt = digestedReceipt(call, outcome, now);
  try {
    receipt = await store(sink, call, receipt);
  } catch (error) {
    traceCallEnd(call, receipt, false);
    throw error;
  }
  traceCallEnd(call, receipt, true);
  return receipt;
}
