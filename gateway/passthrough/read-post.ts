/**
 * A passthrough POST read and checked before anything goes upstream: JSON-RPC 2.0 only, one
 * tools/call at most (opened, authorized and stamped here), ids unique, cancellations of this
 * session's calls mapped to their upstream ids, tasks/result requests looked up.
 */
import type { IncomingMessage } from 'node:http';

import { GatewayError } from '../error-table.ts';
import type { AgentIdentity } from '../identity/agin-card.ts';
import { stampCallParams, withoutPlatformMeta } from '../identity/stamp.ts';
import { callKey } from '../internal/calls-in-flight.ts';
import { caseVariantMember, isRequest, isResponse, type JsonRpcId } from '../internal/json-rpc.ts';
import { readRequestJson } from '../internal/request-text.ts';
import { takeTaskResults } from '../internal/task-results.ts';
import { claimedRevision, headerMismatch, isModernRevision } from '../mcp-headers.ts';
import { MAX_TOOL_NAME_LENGTH } from '../receipt-sink.ts';
import type { Connector, PassthroughDeps, PostRequests } from './exchange.ts';

/** Most tasks/result requests one POST may carry: each result delivered is a receipt written. */
export const MAX_TASK_RESULTS_PER_POST = 100;

/** Who sends the POST, to which connector, in which upstream session. */
export interface PostSender {
  identity: AgentIdentity;
  provider: string;
  connector: Connector;
  upstreamSession: string | undefined;
  secrets: readonly string[] | undefined;
}

/** What a GET or DELETE carries: nothing to read. */
export function noRequests(): PostRequests {
  return {
    body: undefined,
    batch: false,
    awaited: new Set(),
    call: undefined,
    callRpcId: undefined,
    cancelling: [],
    taskResults: new Map(),
    refused: undefined,
    revision: undefined,
  };
}

/** Reads `req`'s body as JSON-RPC messages; throws a GatewayError for anything else. */
async function readMessages(req: IncomingMessage, limit: number): Promise<{ parsed: unknown; messages: unknown[] }> {
  const parsed = await readRequestJson(req, limit);
  const messages = Array.isArray(parsed) ? parsed : [parsed];
  // Only JSON-RPC 2.0 messages go upstream: anything else (null, numbers, an empty batch)
  // is the caller's mistake, answered here, never the upstream's to choke on.
  const wellFormed = (m: unknown) =>
    typeof m === 'object' &&
    m !== null &&
    (m as { jsonrpc?: unknown }).jsonrpc === '2.0' &&
    (typeof (m as { method?: unknown }).method === 'string' || isResponse(m));
  if (messages.length === 0 || !messages.every(wellFormed))
    throw new GatewayError('invalid_request', 'Request body is not a JSON-RPC 2.0 message or batch.');
  // Sent on, a variant would be what a case-insensitive provider reads (see caseVariantMember).
  const variant = messages.map(caseVariantMember).find((v) => v !== undefined);
  if (variant !== undefined)
    throw new GatewayError(
      'invalid_request',
      `Member ${JSON.stringify(variant.slice(0, 64))} differs from an MCP member name only in letter case; send each member once, under its exact name.`,
    );
  checkMcpHeaders(req, parsed, messages);
  return { parsed, messages };
}

/**
 * Refuses, before anything goes upstream, a message whose 2026-07-28 headers disagree with it
 * (-32020, see headerMismatch), and a batch carrying a message of that revision, which has no batches.
 */
function checkMcpHeaders(req: IncomingMessage, parsed: unknown, messages: unknown[]): void {
  if (Array.isArray(parsed)) {
    if (messages.some((m) => isModernRevision(claimedRevision(m))))
      throw new GatewayError('invalid_request', 'JSON-RPC batches may not carry messages of MCP 2026-07-28 or later.');
    return;
  }
  const mismatch = headerMismatch(req.headers, parsed);
  if (mismatch === undefined) return;
  const id = isRequest(parsed) ? parsed.id : null;
  throw new GatewayError('header_mismatch', `Bad Request: the request headers and body disagree: ${mismatch}.`, id);
}

/** The ids of the requests among `messages`; throws a GatewayError for ids MCP does not allow, or more than one call. */
function requestIds(messages: unknown[]): Set<JsonRpcId> {
  const awaited = new Set<JsonRpcId>();
  for (const m of messages) {
    if (!isRequest(m)) continue;
    // MCP: a string or an integer, never null. One past 2^53 (kept raw by parseJson) would not
    // match its answer's id, which JavaScript reads rounded.
    if (typeof m.id !== 'string' && !Number.isSafeInteger(m.id))
      throw new GatewayError('invalid_request', 'Request ids must be strings or integers (at most 2^53 - 1).');
    // Answers are matched to requests by id: two alike would let one take the other's place.
    if (awaited.has(m.id)) throw new GatewayError('invalid_request', 'Request ids must be unique within a batch.');
    awaited.add(m.id);
  }
  if (messages.some((m) => !isRequest(m) && (m as { method?: unknown }).method === 'tools/call')) {
    throw new GatewayError(
      'invalid_request',
      'tools/call must be a request with an id: a notification gets no answer and no receipt.',
    );
  }
  if (messages.filter((m) => isRequest(m) && m.method === 'tools/call').length > 1)
    throw new GatewayError('invalid_request', 'Send one tools/call per request.');
  // Each task result delivered costs a receipt: one POST may not ask for an unbounded number.
  const taskFetches = messages.reduce<number>((n, m) => n + (isRequest(m) && m.method === 'tasks/result' ? 1 : 0), 0);
  if (taskFetches > MAX_TASK_RESULTS_PER_POST)
    throw new GatewayError(
      'invalid_request',
      `Send at most ${MAX_TASK_RESULTS_PER_POST} tasks/result requests per POST (each result delivered is receipted).`,
    );
  return awaited;
}

/** Reads and checks a POST, and opens its call (see the file's comment). */
export async function readPost(deps: PassthroughDeps, req: IncomingMessage, sender: PostSender): Promise<PostRequests> {
  const { identity, provider, upstreamSession } = sender;
  const { parsed, messages: received } = await readMessages(req, deps.maxRequest);
  const batch = Array.isArray(parsed);
  const post: PostRequests = {
    ...noRequests(),
    batch,
    awaited: requestIds(received),
    revision: batch ? undefined : claimedRevision(parsed),
  };
  const target = received.find((m) => isRequest(m) && m.method === 'tools/call');
  const messages = received.map((m) => {
    if (m === target) return m;
    const message = withoutPlatformMeta(m);
    const cancel = message as { method?: unknown; id?: unknown; params?: { requestId?: unknown } };
    if (cancel.method !== 'notifications/cancelled' || cancel.id !== undefined || upstreamSession === undefined)
      return message;
    // A call another instance relays is cancelled there (passed on). Sent on as it is,
    // the message names no request upstream and is ignored there.
    const inCall = deps.inFlight.cancelling(
      callKey(provider, identity.agentId, upstreamSession, cancel.params?.requestId),
    );
    if (!inCall) return message;
    inCall.cancelSent();
    post.cancelling.push(inCall);
    return { ...cancel, params: { ...cancel.params, requestId: inCall.upstreamId } };
  });
  post.taskResults = await takeTaskResults(messages, {
    provider,
    agentId: identity.agentId,
    upstreamSession,
    awaited: post.awaited,
    tasks: deps.tasks,
    clock: deps.pipeline.clock,
  });
  if (target && isRequest(target)) await openCall(deps, post, target, sender);
  post.body = JSON.stringify(batch ? messages : messages[0]);
  return post;
}

/**
 * Opens the POST's tools/call: checks its name, asks the authorize hook, gives it its call id (the
 * id it goes upstream under) and stamps its params.
 */
async function openCall(
  deps: PassthroughDeps,
  post: PostRequests,
  target: { id: JsonRpcId; params?: unknown },
  sender: PostSender,
): Promise<void> {
  const { identity, provider, connector, upstreamSession, secrets } = sender;
  const params = (target.params ?? {}) as { name?: unknown };
  // Under the call's id when it came alone (in a batch the whole POST is refused).
  const about = post.batch ? null : target.id;
  if (typeof params.name !== 'string') throw new GatewayError('invalid_params', 'tools/call needs params.name.', about);
  if (params.name.length === 0 || params.name.length > MAX_TOOL_NAME_LENGTH) {
    throw new GatewayError(
      'invalid_params',
      `tools/call params.name must be 1 to ${MAX_TOOL_NAME_LENGTH} characters.`,
      about,
    );
  }
  const authorization = await deps.pipeline.authorize({ identity, provider, method: 'tools/call', tool: params.name });
  if (!authorization.allowed) post.refused = deps.pipeline.refusal(authorization);
  const call = deps.pipeline.open({
    identity,
    provider,
    tool: params.name,
    path: 'passthrough',
    upstreamSession,
    secrets,
  });
  post.call = call;
  post.callRpcId = target.id;
  // Upstream the call goes under its call id: answers are matched to requests by id, so a
  // caller reusing an id in one session (two POSTs at once) cannot get another call's answer.
  target.id = call.callId;
  post.awaited.delete(post.callRpcId);
  post.awaited.add(call.callId);
  target.params = stampCallParams(target.params, identity, call.callId);
  if (post.refused === undefined) deps.onCall?.(connector.endpointId);
}
