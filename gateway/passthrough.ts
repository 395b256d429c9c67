import { isUtf8 } from 'node:buffer';
import type { IncomingMessage, ServerResponse } from 'node:http';

import {
  AuthError,
  type Clock,
  createSseParser,
  formatSseEvent,
  nestsDeeperThan,
  newId,
  type SseEvent,
} from '../src/kernel/index.ts';
import {
  AnswerDroppedError,
  type AnswerHold,
  createHeldAnswers,
  DEFAULT_HELD_ANSWER_LIMITS,
  DEFAULT_WRITE_TIMEOUT_MS,
  type HeldAnswers,
} from './held-answers.ts';
import type { AgentAuthenticator, AgentIdentity } from './identity/agin-card.ts';
import { type AssertionKey, signAssertion } from './identity/assertion.ts';
import {
  IDENTITY_HEADERS,
  stampCallParams,
  stampResult,
  UPSTREAM_AUTHORIZATION_HEADER,
  UPSTREAM_PROVIDER_HEADER,
  upstreamHeaders,
  withoutPlatformMeta,
} from './identity/stamp.ts';
import { guardDrain, writeHeldAnswer } from './internal/answer-writer.ts';
import {
  type CallEventId,
  createCallEventIds,
  looksLikeCallEventId,
  readCallEventId,
} from './internal/call-event-ids.ts';
import { callIdKey, type CallInFlight, callKey, createCallsInFlight } from './internal/calls-in-flight.ts';
import {
  BODY_CUT,
  bodyTooLarge,
  callAnswer,
  caseVariantMember,
  firstAnswers,
  isRequest,
  isResponse,
  type JsonRpcId,
  type JsonRpcResponse,
  MAX_JSON_DEPTH,
  NOT_UTF8,
  parseJson,
  RECEIPT_UNRECORDED,
  RPC_ERRORS,
  rpcError,
  STORAGE_RETRY_AFTER_S,
  storageUnavailable,
  toolErrorResult,
} from './internal/json-rpc.ts';
import { callSecrets } from './internal/receipt-redaction.ts';
import {
  MAX_FAILED_RESUMES,
  MAX_RESUMES,
  pause,
  reopenStream,
  resumeDelay,
  resumePoint,
} from './internal/stream-resume.ts';
import {
  answerTaskResult,
  rememberCreatedTask,
  takeTaskResults,
  type TaskResultRequest,
} from './internal/task-results.ts';
import {
  describeUpstreamFailure as describeFailure,
  drainRest,
  readBodyText,
  UpstreamTooLargeError,
} from './internal/upstream-exchange.ts';
import {
  type CallContext,
  MAX_TOOL_NAME_LENGTH,
  type receiptFor,
  type ReceiptSink,
  recordCall,
} from './receipt-sink.ts';
import type { SessionSealer } from './session-sealer.ts';
import type { SharedCalls } from './shared-calls.ts';
import type { TaskDirectory } from './task-directory.ts';
import { traceCall, traceUpstreamStart } from './telemetry.ts';
import { sendUnauthorized } from './unauthorized.ts';
import { createUpstreamHttp, type UpstreamHttp, type UpstreamHttpResponse } from './upstream-http.ts';

/** A connector the gateway can reach. */
export interface Connector {
  provider: string;
  url: string;
  endpointId: string;
}

/** Finds online connectors by provider slug. */
export interface ConnectorDirectory {
  byProvider(provider: string): Promise<Connector | undefined>;
}

/** Options of createPassthrough. */
export interface PassthroughOptions {
  directory: ConnectorDirectory;
  agents: AgentAuthenticator;
  receipts: ReceiptSink;
  sealer: SessionSealer;
  assertionKey: () => Promise<AssertionKey>;
  /** `iss` of assertions: Plaza's public base URL. */
  issuer: string;
  clock: Clock;
  /** Outbound HTTP (SSRF-guarded in production); default undici's global pool. */
  http?: UpstreamHttp;
  maxRequestBytes?: number;
  maxResponseBytes?: number;
  /** Time to the upstream's response headers, and for a whole JSON answer. */
  upstreamTimeoutMs?: number;
  /** Told about every call routed to an endpoint (probe scheduling follows demand). */
  onCall?: (endpointId: string) => void;
  /**
   * Told when a connector says its tool list changed (`notifications/tools/list_changed` on a
   * stream relayed to a client), so the catalog can probe it again soon rather than on schedule.
   */
  onToolsChanged?: (endpointId: string) => void;
  /** Where a notifications/cancelled that reaches another instance than its call's is passed on. */
  sharedCalls?: SharedCalls;
  /** Task-augmented calls, so their results name the call and its tool (without it, every creator is unknown). */
  tasks?: TaskDirectory;
  /** The answer bytes this instance may hold (shared with `/mcp`); default limits of its own. */
  held?: HeldAnswers;
  /** How long a client may take nothing of its answer before its connection is closed (see guardDrain). */
  writeTimeoutMs?: number;
}

/** The passthrough handler, and how a server that stops ends its open notification streams. */
export type Passthrough = ((req: IncomingMessage, res: ServerResponse, provider: string) => Promise<void>) & {
  /**
   * Ends every open GET stream (server notifications) and refuses new ones (503): a stopping
   * server would otherwise wait out its drain time for streams that never end. The client
   * opens its stream again, on another instance or this one once it is back.
   */
  endStreams(): void;
};

/** Longest a POST's event stream holds its headers back waiting for the first events. */
const HEADERS_HOLD_MS = 100;
/** How often an open GET stream checks that its agent is still allowed (revocation ends it). */
const REVOCATION_RECHECK_MS = 1_000;
/**
 * The JSON-RPC id a tools/call (or a tasks/result) goes upstream under: its call id (`newId('call')`),
 * the one its receipt is kept under, unique whatever id the caller chose. An answer carrying one
 * on a stream that is not its request's own — a resumed stream replaying it — is known for what it is.
 */
const CALL_RPC_ID = /^call_[0-9a-z]{26}$/;
/** Upstream statuses that refuse the request itself (not the call): a call answered so gets the status too. */
const TRANSPORT_REFUSALS = new Set([400, 406, 415]);
/** What a client is told when the upstream no longer knows the session: start a new one (spec: 404). */
const SESSION_GONE = 'Unknown or expired session; initialize a new one.';
/** What a GET resuming with another stream's call event id (another agent's, connector's or session's) is told. */
const FOREIGN_EVENT_ID = 'Last-Event-ID names no stream of this session.';
/** What takes the place of an answer no caller may get (see relayEventStream, answerTaskResult). */
const DROPPED = Symbol('dropped');
/** The receipt's words for a call the caller cancelled (notifications/cancelled). */
const CALLER_CANCELLED = 'the caller cancelled the call';
/** Most tasks/result requests one POST may carry: each result delivered is a receipt written. */
export const MAX_TASK_RESULTS_PER_POST = 100;

/**
 * Request headers that stop here: hop-by-hop ones (RFC 9110 §7.6.1), ours to set (length, session),
 * and `expect`: the gateway has read the whole body already, and an upstream asked for
 * `100-continue` may refuse it (undici does).
 */
const HOP_BY_HOP = new Set([
  'host',
  'connection',
  'content-length',
  'transfer-encoding',
  'keep-alive',
  'accept-encoding',
  'upgrade',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'expect',
  'mcp-session-id',
]);

/** A failure answered at the HTTP level (before any upstream call). */
class HttpFailure extends Error {
  readonly status: number;
  readonly code: number;
  /** The id of the one request the failure is about, when the body was that request alone. */
  readonly id: JsonRpcId | null;

  constructor(status: number, message: string, code: number = RPC_ERRORS.invalidRequest, id: JsonRpcId | null = null) {
    super(message);
    this.status = status;
    this.code = code;
    this.id = id;
  }
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

/**
 * Why the caller's third-party credential headers cannot go to `provider`, or undefined: the
 * credential sent more than once (Node would join the values into one, and the provider get both),
 * or an X-PLATFORM-Upstream-Provider naming another provider than the path's (the caller meant the
 * credential for that one).
 */
function upstreamCredentialProblem(req: IncomingMessage, provider: string): string | undefined {
  if (req.headers[UPSTREAM_AUTHORIZATION_HEADER] === undefined && req.headers[UPSTREAM_PROVIDER_HEADER] === undefined)
    return undefined;
  const distinct = req.headersDistinct;
  if ((distinct[UPSTREAM_AUTHORIZATION_HEADER]?.length ?? 0) > 1)
    return 'Send X-PLATFORM-Upstream-Authorization once: it is one credential, for one provider.';
  const named = distinct[UPSTREAM_PROVIDER_HEADER];
  if (named === undefined) return undefined;
  if (named.length > 1 || named[0]!.trim() !== provider) {
    return `X-PLATFORM-Upstream-Provider names ${JSON.stringify(named.join(', ').slice(0, 80))}, not "${provider}" of this path; nothing was sent. Call /mcp/p/<provider> of the provider the credential is for.`;
  }
  return undefined;
}

async function readBody(req: IncomingMessage, limit: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of req as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > limit) throw new HttpFailure(413, bodyTooLarge(limit));
      chunks.push(chunk);
    }
  } catch (error) {
    if (error instanceof HttpFailure) throw error;
    // The client cut its request short: its mistake (or its leaving), not Plaza's failure.
    throw new HttpFailure(400, BODY_CUT);
  }
  const body = Buffer.concat(chunks);
  // Decoded, bytes that are not UTF-8 would become U+FFFD and go upstream as if the caller sent them.
  if (!isUtf8(body)) throw new HttpFailure(400, NOT_UTF8, RPC_ERRORS.parseError);
  return body.toString('utf8');
}

/**
 * `/mcp/p/<provider>`: one connector passed through with its own names and its whole protocol
 * (sessions, SSE, progress, server-to-client requests). Every tools/call gets a call id, the
 * agent's AGIN card in `_meta.platform`, identity headers and a signed assertion; its result gets
 * `_meta.platform` and a receipt. Failures stay in-band: a failed call is an `isError` result.
 */
export function createPassthrough(options: PassthroughOptions): Passthrough {
  const http = options.http ?? createUpstreamHttp();
  const maxRequest = options.maxRequestBytes ?? 4 * 1024 * 1024;
  const maxResponse = options.maxResponseBytes ?? 16 * 1024 * 1024;
  const timeoutMs = options.upstreamTimeoutMs ?? 60_000;
  const held = options.held ?? createHeldAnswers(DEFAULT_HELD_ANSWER_LIMITS);
  const writeTimeoutMs = options.writeTimeoutMs ?? DEFAULT_WRITE_TIMEOUT_MS;

  async function authenticate(req: IncomingMessage, provider: string): Promise<AgentIdentity> {
    const header = req.headers.authorization ?? '';
    const match = /^Bearer[ \t]+(\S+)\s*$/i.exec(header);
    if (!match?.[1]) throw new AuthError('Send the agent credential as Authorization: Bearer <agent token>.');
    return options.agents.authenticate(match[1], { provider });
  }

  async function finish(call: CallContext, outcome: Parameters<typeof receiptFor>[1]): Promise<void> {
    await recordCall(options.receipts, call, outcome, options.clock.now());
  }

  const inFlight = createCallsInFlight(options.sharedCalls);

  /**
   * Stamps the response to a tracked call (under the caller's id again) and records its receipt;
   * other messages pass unchanged.
   */
  async function onUpstreamMessage(
    message: unknown,
    call: CallContext | undefined,
    callRpcId: JsonRpcId | undefined,
  ): Promise<unknown> {
    if (!call || !isResponse(message) || message.id !== call.callId) return message;
    const answer = callAnswer(message);
    if ('malformed' in answer) {
      await finish(call, { failure: answer.malformed });
      return failedCall(call, callRpcId, answer.malformed);
    }
    if ('error' in answer) {
      await finish(call, { error: answer.error });
      return { ...message, id: callRpcId ?? null };
    }
    await finish(call, { result: answer.result });
    // A task-augmented call answers with its task: the result comes later, through tasks/result,
    // stamped with this call's id then (the task is remembered before the answer leaves).
    await rememberCreatedTask(options.tasks, call, answer.result);
    return { ...message, id: callRpcId ?? null, result: stampResult(answer.result, call.identity, call.callId) };
  }

  /** Open GET streams (server notifications), ended by endStreams; set once the server stops. */
  const notificationStreams = new Set<UpstreamHttpResponse>();
  let stopping = false;

  /**
   * Answers a request while Plaza cannot read its database: 503 under the ids of the requests a
   * POST holds (storageUnavailable), once its body is read; a body that cannot be read or parsed
   * is answered as such, as it would be otherwise.
   */
  async function refuseForStorage(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let body: unknown;
    if (req.method === 'POST') {
      let text: string;
      try {
        text = await readBody(req, maxRequest);
      } catch (error) {
        // readBody throws only HttpFailure: 413 (the rest unread), 400 cut short or not UTF-8.
        const failure = error as HttpFailure;
        sendJson(
          res,
          failure.status,
          rpcError(null, failure.code, failure.message),
          failure.status === 413 ? { connection: 'close' } : {},
        );
        return;
      }
      try {
        body = parseJson(text);
      } catch {
        sendJson(res, 400, rpcError(null, RPC_ERRORS.parseError, 'Request body is not valid JSON.'));
        return;
      }
    }
    sendJson(res, 503, storageUnavailable(body), { 'retry-after': STORAGE_RETRY_AFTER_S });
  }

  async function handle(req: IncomingMessage, res: ServerResponse, provider: string): Promise<void> {
    let identity: AgentIdentity;
    try {
      identity = await authenticate(req, provider);
    } catch (error) {
      if (!(error instanceof AuthError)) {
        // The credential could not be checked (the database is unreachable): refuse, clearly.
        await refuseForStorage(req, res);
        return;
      }
      await sendUnauthorized(req, res, error, options.agents.resourceMetadataUrl?.({ provider }));
      return;
    }
    try {
      let connector: Connector | undefined;
      try {
        connector = await options.directory.byProvider(provider);
      } catch {
        await refuseForStorage(req, res);
        return;
      }
      if (!connector) throw new HttpFailure(404, `No online connector for provider "${provider}".`);
      const credentialProblem = upstreamCredentialProblem(req, provider);
      if (credentialProblem) throw new HttpFailure(400, credentialProblem);

      let upstreamSession: string | undefined;
      const presented = req.headers['mcp-session-id'];
      if (typeof presented === 'string' && presented !== '') {
        const claims = options.sealer.open(presented);
        if (!claims || claims.provider !== provider || claims.agentId !== identity.agentId)
          throw new HttpFailure(404, SESSION_GONE);
        upstreamSession = claims.upstreamSessionId;
      }

      const method = req.method ?? 'GET';
      if (!['POST', 'GET', 'DELETE'].includes(method)) throw new HttpFailure(405, `Method ${method} is not allowed.`);
      const lastEventId = method === 'GET' ? req.headers['last-event-id'] : undefined;
      if (typeof lastEventId === 'string' && looksLikeCallEventId(lastEventId)) {
        // Only the stream's own agent, on its connector and in its session, resumes a call's
        // stream: any other GET presenting one of its ids (read off a log, a proxy, a shared
        // transcript) is refused, neither answered for the call nor sent upstream, where it names nothing.
        const resumingCall = readCallEventId(lastEventId, options.sealer.sign, {
          provider,
          agentId: identity.agentId,
          upstreamSession,
        });
        if (!resumingCall) throw new HttpFailure(400, FOREIGN_EVENT_ID);
        // The call may still run: its stream broke where this instance cannot see it (another
        // instance relays it, or has not yet noticed the broken connection). It is ended first —
        // the upstream told, the receipt `error` — so the answer below is true wherever it runs.
        inFlight.end(callIdKey(resumingCall.callId));
        answerEndedCall(res, resumingCall, identity);
        return;
      }
      if (method === 'GET' && stopping)
        throw new HttpFailure(503, 'Plaza is shutting down; open the stream again in a moment.', RPC_ERRORS.internal);

      let body: string | undefined;
      /** Whether the POST is a batch (its answers go back as one). */
      let batch = false;
      /** The ids of the requests a POST carries: its event stream ends once each is answered. */
      const awaited = new Set<JsonRpcId>();
      let call: CallContext | undefined;
      let callRpcId: JsonRpcId | undefined;
      /** Calls of this session a notifications/cancelled in this POST is about. */
      const cancelling: CallInFlight[] = [];
      /** The tasks/result requests of this POST, by the id each went upstream under (see TaskResultRequest). */
      let taskResults = new Map<string, TaskResultRequest>();
      /** When this request arrived: a task result's receipt counts its latency from here. */
      const arrivedAt = options.clock.now();
      /** The caller's credential for the provider, kept out of receipts. */
      const secrets = callSecrets(req.headers[UPSTREAM_AUTHORIZATION_HEADER]);
      if (method === 'POST') {
        const text = await readBody(req, maxRequest);
        let parsed: unknown;
        try {
          parsed = parseJson(text);
        } catch {
          throw new HttpFailure(400, 'Request body is not valid JSON.', RPC_ERRORS.parseError);
        }
        if (nestsDeeperThan(parsed, MAX_JSON_DEPTH))
          throw new HttpFailure(400, `Request body nests deeper than ${MAX_JSON_DEPTH} levels.`);
        batch = Array.isArray(parsed);
        let messages = Array.isArray(parsed) ? parsed : [parsed];
        // Only JSON-RPC 2.0 messages go upstream: anything else (null, numbers, an empty batch)
        // is the caller's mistake, answered here, never the upstream's to choke on.
        const wellFormed = (m: unknown) =>
          typeof m === 'object' &&
          m !== null &&
          (m as { jsonrpc?: unknown }).jsonrpc === '2.0' &&
          (typeof (m as { method?: unknown }).method === 'string' || isResponse(m));
        if (messages.length === 0 || !messages.every(wellFormed))
          throw new HttpFailure(400, 'Request body is not a JSON-RPC 2.0 message or batch.');
        // Sent on, a variant would be what a case-insensitive provider reads (see caseVariantMember).
        const variant = messages.map(caseVariantMember).find((v) => v !== undefined);
        if (variant !== undefined)
          throw new HttpFailure(
            400,
            `Member ${JSON.stringify(variant.slice(0, 64))} differs from an MCP member name only in letter case; send each member once, under its exact name.`,
          );
        for (const m of messages) {
          if (!isRequest(m)) continue;
          // MCP: a string or an integer, never null. One past 2^53 (kept raw by parseJson) would not
          // match its answer's id, which JavaScript reads rounded.
          if (typeof m.id !== 'string' && !Number.isSafeInteger(m.id))
            throw new HttpFailure(400, 'Request ids must be strings or integers (at most 2^53 - 1).');
          // Answers are matched to requests by id: two alike would let one take the other's place.
          if (awaited.has(m.id)) throw new HttpFailure(400, 'Request ids must be unique within a batch.');
          awaited.add(m.id);
        }
        if (messages.some((m) => !isRequest(m) && (m as { method?: unknown }).method === 'tools/call')) {
          throw new HttpFailure(
            400,
            'tools/call must be a request with an id: a notification gets no answer and no receipt.',
          );
        }
        const calls = messages.filter((m) => isRequest(m) && m.method === 'tools/call');
        if (calls.length > 1) throw new HttpFailure(400, 'Send one tools/call per request.');
        // Each task result delivered costs a receipt: one POST may not ask for an unbounded number.
        const taskFetches = messages.reduce<number>(
          (n, m) => n + (isRequest(m) && m.method === 'tasks/result' ? 1 : 0),
          0,
        );
        if (taskFetches > MAX_TASK_RESULTS_PER_POST)
          throw new HttpFailure(
            400,
            `Send at most ${MAX_TASK_RESULTS_PER_POST} tasks/result requests per POST (each result delivered is receipted).`,
          );
        const target = calls[0];
        messages = messages.map((m) => {
          if (m === target) return m;
          const message = withoutPlatformMeta(m);
          const cancel = message as { method?: unknown; id?: unknown; params?: { requestId?: unknown } };
          if (cancel.method !== 'notifications/cancelled' || cancel.id !== undefined || upstreamSession === undefined)
            return message;
          // A call another instance relays is cancelled there (passed on). Sent on as it is,
          // the message names no request upstream and is ignored there.
          const inCall = inFlight.cancelling(
            callKey(provider, identity.agentId, upstreamSession, cancel.params?.requestId),
          );
          if (!inCall) return message;
          inCall.cancelSent();
          cancelling.push(inCall);
          return { ...cancel, params: { ...cancel.params, requestId: inCall.upstreamId } };
        });
        taskResults = await takeTaskResults(messages, {
          provider,
          agentId: identity.agentId,
          upstreamSession,
          awaited,
          tasks: options.tasks,
          clock: options.clock,
        });
        if (target && isRequest(target)) {
          const params = (target.params ?? {}) as { name?: unknown };
          // Under the call's id when it came alone (in a batch the whole POST is refused).
          const about = batch ? null : target.id;
          if (typeof params.name !== 'string')
            throw new HttpFailure(400, 'tools/call needs params.name.', RPC_ERRORS.invalidParams, about);
          if (params.name.length === 0 || params.name.length > MAX_TOOL_NAME_LENGTH) {
            throw new HttpFailure(
              400,
              `tools/call params.name must be 1 to ${MAX_TOOL_NAME_LENGTH} characters.`,
              RPC_ERRORS.invalidParams,
              about,
            );
          }
          call = {
            callId: newId('call', options.clock.now()),
            identity,
            provider,
            tool: params.name,
            startedAt: options.clock.now(),
            upstreamSession,
            secrets,
          };
          callRpcId = target.id;
          // Upstream the call goes under its call id: answers are matched to requests by id, so a
          // caller reusing an id in one session (two POSTs at once) cannot get another call's answer.
          target.id = call.callId;
          awaited.delete(callRpcId);
          awaited.add(call.callId);
          traceCall(call, 'passthrough');
          target.params = stampCallParams(target.params, identity, call.callId);
          options.onCall?.(connector.endpointId);
        }
        body = JSON.stringify(Array.isArray(parsed) ? messages : messages[0]);
      }

      // An agent (or an instance) holding as many unread answers as it may gets no more until some
      // are read: the POST's requests are answered in-band, nothing goes upstream (a call is receipted as refused).
      const busy = awaited.size > 0 ? held.refusal(identity.agentId) : undefined;
      if (busy !== undefined) {
        if (call) await finish(call, { refused: busy });
        const answers = [...awaited].map((id) =>
          call && id === call.callId
            ? stampToolError(toolErrorResult(callRpcId ?? null, `${busy}; nothing was called.`), call)
            : rpcError(taskResults.get(String(id))?.callerId ?? id, RPC_ERRORS.internal, `${busy}; nothing was sent.`),
        );
        sendJson(res, 200, batch ? answers : answers[0]);
        return;
      }
      /** The bytes of this request's answer Plaza holds, from the first read upstream until its client took them. */
      const hold = held.open(identity.agentId);
      whenClosed(res, () => hold.release());
      /** A whole JSON answer, held and written as held-answers has it. */
      const sendHeld = (status: number, text: string, headers: Record<string, string>) =>
        writeHeldAnswer(
          res,
          { status, headers: { 'content-type': 'application/json', ...headers }, text },
          hold,
          writeTimeoutMs,
        );
      /** The answer to a tasks/result of this POST, receipted (see answerTaskResult), or DROPPED; other messages as they are. */
      const answerTask = async (message: unknown): Promise<unknown> => {
        if (taskResults.size === 0 || !isResponse(message) || typeof message.id !== 'string') return message;
        const request = taskResults.get(message.id);
        if (!request) return message;
        // A cancelled request gets no answer.
        return request.cancelled
          ? DROPPED
          : answerTaskResult(message, request, {
              receipts: options.receipts,
              clock: options.clock,
              identity,
              provider,
              arrivedAt,
              secrets,
            });
      };
      /** A JSON answer without a call, its tasks/result answers receipted: the messages to send, or DROPPED for none. */
      const answerTasks = async (parsed: unknown): Promise<unknown> => {
        if (!Array.isArray(parsed)) return answerTask(parsed);
        if (parsed.length === 0) return parsed;
        const out = (await Promise.all(firstAnswers(parsed).map(answerTask))).filter((m) => m !== DROPPED);
        return out.length > 0 ? out : DROPPED;
      };
      const headers = upstreamHeaders(req.headers, identity, call?.callId ?? '', '');
      for (const name of Object.keys(headers)) if (HOP_BY_HOP.has(name)) delete headers[name];
      if (call) {
        const key = await options.assertionKey();
        headers[IDENTITY_HEADERS.assertion] = await signAssertion(key, {
          card: identity,
          callId: call.callId,
          audience: connector.url,
          issuer: options.issuer,
          nowSeconds: Math.floor(options.clock.now() / 1000),
        });
      } else {
        delete headers[IDENTITY_HEADERS.callId];
        delete headers[IDENTITY_HEADERS.assertion];
      }
      if (upstreamSession) headers['mcp-session-id'] = upstreamSession;

      // A POST's whole answer (JSON or SSE) must arrive within the timeout; a GET stream (server
      // notifications) may stay open, so only its headers are timed.
      const controller = new AbortController();
      /**
       * A call the gateway stops waiting for (its time is up, or its caller left) is cancelled
       * upstream too, in the call's session and under its upstream id: on streamable HTTP a cut
       * connection is no cancellation, and the provider would work on for nobody. Once per call,
       * and never once the provider has answered it (the answer is being receipted and sent); a
       * caller's own notifications/cancelled is passed on with its POST instead.
       */
      let upstreamTold = false;
      const answeredUpstream = () => {
        upstreamTold = true;
      };
      /** The upstream's whole answer came (not an event stream): none of this POST's requests is pending there. */
      let answeredWhole = false;
      const tellUpstream = (reason: string) => {
        if (upstreamSession === undefined) return;
        // The tasks/result requests the provider has not answered yet (and the caller not cancelled) are told of too.
        for (const request of taskResults.values()) {
          if (answeredWhole || request.cancelled || !awaited.has(request.resultCallId)) continue;
          request.cancelled = true;
          noticeUpstream(request.resultCallId, reason);
        }
        if (upstreamTold || !call) return;
        upstreamTold = true;
        noticeUpstream(call.callId, reason);
      };
      /** Sends the upstream a notifications/cancelled for its request `requestId`, in this session. */
      const noticeUpstream = (requestId: string, reason: string) => {
        const notice = JSON.stringify({
          jsonrpc: '2.0',
          method: 'notifications/cancelled',
          params: { requestId, reason },
        });
        const noticeHeaders: Record<string, string> = { ...headers, 'content-type': 'application/json' };
        delete noticeHeaders[IDENTITY_HEADERS.callId];
        delete noticeHeaders[IDENTITY_HEADERS.assertion];
        http(connector.url, {
          method: 'POST',
          headers: noticeHeaders,
          body: notice,
          signal: AbortSignal.timeout(timeoutMs),
        }).then(
          (answer) => answer.discard(),
          () => undefined,
        );
      };
      const timer = setTimeout(() => {
        tellUpstream(`the gateway stopped waiting: no answer within ${timeoutMs} ms`);
        controller.abort(new DOMException('timeout', 'TimeoutError'));
      }, timeoutMs);
      let cancelled = false;
      whenClosed(res, () => {
        // 'close' comes after every answer too; only a client that left before it matters.
        if (res.writableFinished) return;
        tellUpstream('the caller went away');
        controller.abort(new DOMException('client went away', 'AbortError'));
      });
      // Every call is kept under its call id, so a resume of its stream ends it (see the GET above);
      // in a session also under the caller's id, which a notifications/cancelled names.
      if (call) {
        const entry = {
          upstreamId: call.callId,
          cancelSent: answeredUpstream,
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
        const releases = [inFlight.add(callIdKey(call.callId), entry, fromElsewhere)];
        if (upstreamSession !== undefined)
          releases.push(
            inFlight.add(callKey(provider, identity.agentId, upstreamSession, callRpcId), entry, fromElsewhere),
          );
        whenClosed(res, () => releases.forEach((release) => release()));
      }
      /** Every request this POST still waited for was a tasks/result the caller cancelled: it ends with no answer. */
      let allCancelled = false;
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
          const release = inFlight.add(
            callKey(provider, identity.agentId, upstreamSession, request.callerId),
            entry,
            () => {
              noticeUpstream(request.resultCallId, CALLER_CANCELLED);
              entry.cancel();
            },
          );
          releases.push(release);
        }
        whenClosed(res, () => releases.forEach((release) => release()));
      }
      /**
       * The ids this POST's requests went upstream under. An answer under any other id answers
       * nothing the caller asked here — a provider's guess at a caller's id, say, dressed as a
       * call's answer — and never reaches the caller.
       */
      const asked: ReadonlySet<JsonRpcId> = new Set(awaited);
      /**
       * JSON-RPC errors for the requests of this POST other than its call that `ids` still holds
       * (under the caller's ids), saying what failed upstream: a request is answered in-band
       * whatever became of the upstream, never left to the client's timeout. A tasks/result the
       * caller cancelled gets none.
       */
      const failedRequests = (ids: Iterable<JsonRpcId>, why: string): JsonRpcResponse[] =>
        [...ids].flatMap((id) => {
          if (call && id === call.callId) return [];
          const task = typeof id === 'string' ? taskResults.get(id) : undefined;
          if (task?.cancelled) return [];
          return [rpcError(task ? task.callerId : id, RPC_ERRORS.internal, `Upstream failed: ${why}.`)];
        });
      /**
       * Answers a request without a call whose upstream failed: a POST's requests get their errors;
       * a POST of notifications only, a GET or a DELETE one error with `status`.
       */
      const failRequest = (why: string, headers: Record<string, string>, status: number) => {
        const errors = failedRequests(asked, why);
        if (errors.length > 0) sendJson(res, 200, errors.length === 1 && !batch ? errors[0] : errors, headers);
        else sendJson(res, status, rpcError(null, RPC_ERRORS.internal, `Upstream failed: ${why}.`), headers);
      };
      /** The ids of this POST's requests (upstream ids) that `answers` holds no answer for. */
      const unanswered = (answers: unknown): JsonRpcId[] => {
        const ids = new Set(
          (Array.isArray(answers) ? answers : [answers])
            .filter((m) => isResponse(m))
            .map((m) => (m as JsonRpcResponse).id),
        );
        return [...asked].filter((id) => !ids.has(id));
      };
      /** The provider's error for no request (id null) among `answers`, as the reason requests went unanswered. */
      const errorForNone = (answers: unknown): string | undefined => {
        const anonymous = (Array.isArray(answers) ? answers : [answers]).find(
          (m) => isResponse(m) && m.id === null && m.error !== undefined,
        ) as JsonRpcResponse | undefined;
        const message = anonymous?.error?.message;
        return anonymous
          ? `the upstream answered an error for no request${typeof message === 'string' ? ` (${message.slice(0, 200)})` : ''}`
          : undefined;
      };
      const whyUnanswered = (answers: unknown): string =>
        errorForNone(answers) ?? 'the upstream answered without answering it';
      let upstream: UpstreamHttpResponse;
      if (call) traceUpstreamStart(call);
      try {
        upstream = await http(connector.url, { method, headers, body, signal: controller.signal });
      } catch (error) {
        // Failed on its way (a timeout or a caller gone told the provider already).
        answeredUpstream();
        answeredWhole = true;
        clearTimeout(timer);
        const why = cancelled ? CALLER_CANCELLED : describeFailure(error);
        if (call) {
          await finish(call, { failure: why });
          sendJson(res, 200, failedCall(call, callRpcId, why));
        } else if (allCancelled) endUnanswered(res, {});
        else failRequest(why, {}, 502);
        return;
      } finally {
        // The cancellation went upstream (under the call's id there); the call ends now, receipted
        // as cancelled, rather than wait for an answer the upstream will not send.
        for (const inCall of cancelling) inCall.cancel();
      }
      const ok = upstream.status >= 200 && upstream.status <= 299;

      const responseHeaders: Record<string, string> = {};
      const upstreamSessionOut = upstream.header('mcp-session-id');
      if (upstreamSessionOut) {
        // The same upstream session the caller presented: its sealed id stands (no new seal per call).
        responseHeaders['mcp-session-id'] =
          upstreamSessionOut === upstreamSession && typeof presented === 'string'
            ? presented
            : options.sealer.seal({ provider, agentId: identity.agentId, upstreamSessionId: upstreamSessionOut });
      }
      const version = upstream.header('mcp-protocol-version');
      if (version) responseHeaders['mcp-protocol-version'] = version;
      const type = upstream.header('content-type') ?? '';
      // Anything but an event stream is the provider's whole answer (or refusal) to the request.
      if (!type.startsWith('text/event-stream')) {
        answeredUpstream();
        answeredWhole = true;
      }

      if (!ok || upstream.status === 202 || upstream.status === 204) {
        // Read within the call's time: an upstream that drips its refusal is cut by the timer.
        const text = await readBodyText(upstream, 64 * 1024).catch(() => '');
        clearTimeout(timer);
        // A session the upstream forgot (it restarted) is a 404, which tells a client to start a
        // new one. Servers built on the SDK's example (server-everything among them) say 400
        // "No valid session ID provided" instead, and a client that gets it is stuck for good.
        const sessionGone =
          upstreamSession !== undefined &&
          (upstream.status === 404 || (upstream.status === 400 && forgotSession(text)));
        // A provider that wants a credential of its own (or refuses the one sent) says 401 with
        // its own WWW-Authenticate. Neither goes to the caller as such: the caller's Authorization
        // is its Plaza credential, and a client that ran the provider's authorization flow would
        // replace it. The caller is told where the provider's credential goes instead.
        const credential =
          upstream.status === 401 ? credentialRefusal(provider, headers['authorization'] !== undefined) : undefined;
        if (call) {
          const said = upstreamErrorMessage(text);
          const why = sessionGone
            ? 'the upstream no longer knows the session (initialize a new one)'
            : (credential ??
              (ok
                ? `the upstream accepted the call (HTTP ${upstream.status}) without answering it`
                : `the upstream answered HTTP ${upstream.status}${said ? ` (${said})` : ''}`));
          await finish(call, { failure: why });
          // The transport's own refusals keep their status, as the spec has them (400 for an
          // unsupported MCP-Protocol-Version, 404 for a forgotten session, 406 and 415 for what the
          // client may not send); an upstream failing the call is answered in-band.
          const status = sessionGone ? 404 : TRANSPORT_REFUSALS.has(upstream.status) ? upstream.status : 200;
          sendJson(res, status, failedCall(call, callRpcId, why), responseHeaders);
          return;
        }
        if (sessionGone) {
          sendJson(res, 404, rpcError(null, RPC_ERRORS.invalidRequest, SESSION_GONE), responseHeaders);
          return;
        }
        if (credential) {
          sendJson(
            res,
            403,
            rpcError(null, RPC_ERRORS.invalidRequest, `${credential[0]!.toUpperCase()}${credential.slice(1)}.`),
            responseHeaders,
          );
          return;
        }
        // An upstream failing (5xx) or redirecting (not followed) is no answer from the MCP server:
        // the POST's requests get JSON-RPC errors saying so. (A task's result coming with such a
        // status is still receipted and passed on, below.)
        if (
          method === 'POST' &&
          (upstream.status >= 500 || (upstream.status >= 300 && upstream.status < 400)) &&
          !(taskResults.size > 0 && type.startsWith('application/json') && text)
        ) {
          failRequest(
            `the upstream answered HTTP ${upstream.status}${upstreamErrorMessage(text) ? ` (${upstreamErrorMessage(text)})` : ''}`,
            responseHeaders,
            502,
          );
          return;
        }
        // Method not allowed (405), accepted notifications (202), other refusals: the client needs
        // the real status; the upstream's body is passed on only when it is JSON-RPC. A refusal
        // whose body cannot be passed on gets a JSON-RPC error saying what the upstream answered.
        const passStatus = () => {
          if (upstream.status < 300) {
            res.writeHead(upstream.status, responseHeaders);
            res.end();
            return;
          }
          const said = upstreamErrorMessage(text);
          const code = upstream.status >= 500 ? RPC_ERRORS.internal : RPC_ERRORS.invalidRequest;
          sendJson(
            res,
            upstream.status,
            rpcError(null, code, `The upstream answered HTTP ${upstream.status}${said ? ` (${said})` : ''}.`),
            responseHeaders,
          );
        };
        if (type.startsWith('application/json') && text && taskResults.size > 0) {
          // A task's result is receipted whatever status comes with it, or not passed on at all.
          let refusal: unknown;
          try {
            refusal = parseJson(text);
          } catch {
            refusal = undefined;
          }
          const asAsked =
            refusal === undefined || nestsDeeperThan(refusal, MAX_JSON_DEPTH) ? DROPPED : onlyAsked(refusal, asked);
          if (asAsked === DROPPED) passStatus();
          else sendAnswers(res, upstream.status, await answerTasks(asAsked), responseHeaders);
        } else if (type.startsWith('application/json') && text) {
          // Passed on as it came, but for answers to requests this POST did not send (see asked).
          let refusal: unknown;
          try {
            refusal = parseJson(text);
          } catch {
            refusal = undefined;
          }
          const asAsked = refusal === undefined ? DROPPED : onlyAsked(refusal, asked);
          if (asAsked === DROPPED) passStatus();
          else {
            const body = asAsked === refusal ? text : JSON.stringify(asAsked);
            res.writeHead(upstream.status, { 'content-type': 'application/json', ...responseHeaders });
            res.end(body);
          }
        } else passStatus();
        return;
      }

      if (type.startsWith('text/event-stream')) {
        if (method !== 'POST') clearTimeout(timer);
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
                authenticate(req, provider)
                  .catch((error: unknown) => {
                    if (error instanceof AuthError) upstream.discard();
                  })
                  .finally(() => (checking = false));
              }, REVOCATION_RECHECK_MS)
            : undefined;
        recheck?.unref();
        if (method === 'GET') notificationStreams.add(upstream);
        try {
          // A GET stream carries no answers unless it resumes a POST's stream (Last-Event-ID).
          const resumed = method === 'GET' && typeof req.headers['last-event-id'] === 'string';
          // A POST's stream is resumed in the session it went in (or the one its answer opened).
          const resumeHeaders = (lastEventId: string): Record<string, string> => {
            const out: Record<string, string> = {
              ...headers,
              accept: 'text/event-stream',
              'last-event-id': lastEventId,
            };
            delete out['content-type'];
            delete out[IDENTITY_HEADERS.callId];
            delete out[IDENTITY_HEADERS.assertion];
            const session = upstreamSessionOut ?? upstreamSession;
            if (session !== undefined) out['mcp-session-id'] = session;
            return out;
          };
          const resume =
            method === 'POST'
              ? {
                  open: (lastEventId: string) =>
                    http(connector.url, {
                      method: 'GET',
                      headers: resumeHeaders(lastEventId),
                      signal: controller.signal,
                    }),
                  signal: controller.signal,
                  // The provider may still be working on the call the gateway no longer waits for. (Not
                  // tellUpstream: a tasks/result beside it is not the caller's to lose, and gets its error.)
                  abandon: (why: string) => {
                    if (upstreamTold || !call) return;
                    upstreamTold = true;
                    noticeUpstream(call.callId, `the gateway stopped waiting: ${why}`);
                  },
                }
              : undefined;
          await relayEventStream(
            upstream,
            res,
            responseHeaders,
            call,
            callRpcId,
            awaited,
            () => cancelled,
            connector.endpointId,
            answeredUpstream,
            answerTask,
            resumed,
            failedRequests,
            hold,
            resume,
          );
        } finally {
          clearTimeout(timer);
          clearInterval(recheck);
          notificationStreams.delete(upstream);
        }
        return;
      }

      let text: string;
      try {
        text = await readBodyText(upstream, maxResponse, (size) => {
          if (!hold.set(size)) throw new AnswerDroppedError(held.limits);
        });
        // Read whole: it will be delivered (or its connection cut), not let go for another.
        if (!hold.keep() && !res.closed) throw new AnswerDroppedError(held.limits);
      } catch (error) {
        clearTimeout(timer);
        const why =
          error instanceof UpstreamTooLargeError || error instanceof AnswerDroppedError
            ? error.message
            : cancelled
              ? CALLER_CANCELLED
              : describeFailure(error);
        if (call) {
          await finish(call, { failure: why });
          sendJson(res, 200, failedCall(call, callRpcId, why), responseHeaders);
        } else if (allCancelled) endUnanswered(res, responseHeaders);
        else failRequest(why, responseHeaders, 200);
        return;
      }
      clearTimeout(timer);
      let parsed: unknown;
      try {
        parsed = parseJson(text);
      } catch {
        if (call) {
          await finish(call, { failure: 'the upstream answered malformed JSON' });
          sendJson(res, 200, failedCall(call, callRpcId, 'the upstream answered malformed JSON'), responseHeaders);
        } else if (text === '' && method !== 'POST') {
          // A GET or DELETE the upstream answered with nothing (a session ended): nothing to parse.
          res.writeHead(upstream.status, responseHeaders);
          res.end();
        } else if (text.trim() === '' && asked.size === 0) {
          // Notifications or responses only, taken with a 200 and no body (older servers answer so,
          // where MCP asks for 202): accepted, and the client gets the 202 MCP has it expect.
          res.writeHead(202, responseHeaders);
          res.end();
        } else failRequest('the upstream answered malformed JSON', responseHeaders, 200);
        return;
      }
      const kept = onlyAsked(parsed, asked);
      if (!call) {
        // What the provider did not ask goes; each request it left unanswered gets an error.
        if (kept === DROPPED) {
          failRequest('it answered no request of this POST', responseHeaders, 200);
          return;
        }
        const missing = unanswered(kept);
        if (missing.length > 0 && !batch) {
          failRequest(whyUnanswered(kept), responseHeaders, 200);
          return;
        }
        if (kept !== parsed || missing.length > 0) {
          parsed = [...(Array.isArray(kept) ? kept : [kept]), ...failedRequests(missing, whyUnanswered(kept))];
          text = JSON.stringify(parsed);
        }
        if (taskResults.size > 0) {
          // A task's result never passes unreceipted, nor inside an answer too deep to look into.
          if (nestsDeeperThan(parsed, MAX_JSON_DEPTH))
            sendJson(
              res,
              200,
              rpcError(
                null,
                RPC_ERRORS.internal,
                `Upstream failed: its answer nests deeper than ${MAX_JSON_DEPTH} levels.`,
              ),
              responseHeaders,
            );
          else {
            const answers = await answerTasks(parsed);
            if (answers === DROPPED) endUnanswered(res, responseHeaders);
            else sendHeld(200, JSON.stringify(answers), responseHeaders);
          }
          return;
        }
        // Nothing to stamp: the upstream's JSON goes on as it came.
        sendHeld(200, text, responseHeaders);
        return;
      }
      if (nestsDeeperThan(parsed, MAX_JSON_DEPTH)) {
        const why = `the upstream's answer nests deeper than ${MAX_JSON_DEPTH} levels`;
        await finish(call, { failure: why });
        sendJson(res, 200, failedCall(call, callRpcId, why), responseHeaders);
        return;
      }
      // The first answer to each request counts (its receipt is the one kept); a second is dropped.
      const answered =
        kept === DROPPED
          ? DROPPED
          : Array.isArray(kept)
            ? (
                await Promise.all(
                  firstAnswers(kept).map(async (m) => answerTask(await stampOrFail(m, call, callRpcId))),
                )
              ).filter((m) => m !== DROPPED)
            : await answerTask(await stampOrFail(kept, call, callRpcId));
      const missing = unanswered(kept === DROPPED ? [] : kept);
      const others = failedRequests(missing, whyUnanswered(kept));
      if (missing.includes(call.callId)) {
        // No answer for the call: the caller gets a failed call under its id, with the answers to
        // the POST's other requests (a JSON answer holds nothing else the caller could use).
        const why = errorForNone(kept) ?? 'the upstream answered without a result for the call';
        await finish(call, { failure: why });
        const answers = [
          ...(Array.isArray(answered) ? answered : [answered]).filter((m) => isResponse(m) && m.id !== null),
          ...others,
          failedCall(call, callRpcId, why),
        ];
        sendHeld(200, JSON.stringify(batch ? answers : answers.at(-1)), responseHeaders);
        return;
      }
      sendHeld(
        200,
        JSON.stringify(
          others.length > 0 ? [...(Array.isArray(answered) ? answered : [answered]), ...others] : answered,
        ),
        responseHeaders,
      );
    } catch (error) {
      if (error instanceof HttpFailure) {
        // A 413 leaves the rest of the body unread: the connection cannot be reused.
        const extra: Record<string, string> =
          error.status === 503
            ? { 'retry-after': STORAGE_RETRY_AFTER_S }
            : error.status === 413
              ? { connection: 'close' }
              : error.status === 405
                ? { allow: 'GET, POST, DELETE' }
                : {};
        if (!res.headersSent) sendJson(res, error.status, rpcError(error.id, error.code, error.message), extra);
        return;
      }
      throw error;
    }
  }

  /**
   * Stamps the call's response, or — when its receipt cannot be recorded anywhere (neither the
   * database nor the spool took it) — answers an error: a result is never returned unreceipted.
   */
  async function stampOrFail(message: unknown, call: CallContext, callRpcId: JsonRpcId | undefined): Promise<unknown> {
    try {
      return await onUpstreamMessage(message, call, callRpcId);
    } catch {
      return stampToolError(toolErrorResult(callRpcId ?? null, RECEIPT_UNRECORDED), call);
    }
  }

  function stampToolError(response: JsonRpcResponse, call: CallContext): JsonRpcResponse {
    return { ...response, result: stampResult(response.result, call.identity, call.callId) };
  }

  /** The answer to a call that failed: an isError result saying why, stamped like any result. */
  function failedCall(call: CallContext, callRpcId: JsonRpcId | undefined, why: string): JsonRpcResponse {
    return stampToolError(toolErrorResult(callRpcId ?? null, `Call failed: ${why}.`), call);
  }

  /**
   * Answers a client that resumes a call's POST stream (its Last-Event-ID is one of
   * createCallEventIds'). That stream broke before the call's answer reached the client, which
   * ended the call (cancelled upstream, receipted `error`), and Plaza keeps no answer to replay: the
   * client gets the call's `isError` result under its own id at once, on a stream that then ends.
   * The SDK client takes it as its request's answer and stops resuming; a 404 would tell it that
   * the session is gone, and a stream held open would never bring anything.
   */
  function answerEndedCall(res: ServerResponse, resuming: CallEventId, identity: AgentIdentity): void {
    const why = `Call failed: the connection to the caller was lost before the result reached it, and a call's stream cannot be resumed; its receipt (${resuming.callId}) says how the call ended.`;
    // A caller's id too long to name in an event id leaves nothing to answer under but null.
    const failed =
      resuming.callerId === null
        ? rpcError(null, RPC_ERRORS.invalidRequest, why)
        : toolErrorResult(resuming.callerId, why);
    const answer =
      failed.result === undefined
        ? failed
        : { ...failed, result: stampResult(failed.result, identity, resuming.callId) };
    const text = formatSseEvent({ event: 'message', data: JSON.stringify(answer) });
    res.writeHead(200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      'content-length': Buffer.byteLength(text),
    });
    res.end(text);
  }

  /**
   * Relays an upstream event stream. Events that arrive together leave in one socket write
   * (gathered until this turn of the event loop is over). A POST's stream ends once every request
   * in it is answered — the spec has the server close it then — so its headers wait for the first
   * events (at most HEADERS_HOLD_MS), and a call answered in one upstream read leaves in one write:
   * headers, answer and end; the rest of the upstream's stream is read in the background. A GET
   * stream (server notifications), or a POST without requests, sends its headers at once and lasts
   * as long as the upstream's.
   */
  async function relayEventStream(
    upstream: UpstreamHttpResponse,
    res: ServerResponse,
    headers: Record<string, string>,
    call: CallContext | undefined,
    callRpcId: JsonRpcId | undefined,
    awaited: Set<JsonRpcId>,
    cancelled: () => boolean,
    endpointId: string,
    /** Called when the call's answer arrives (before it is receipted and sent). */
    onAnswer: () => void,
    /** Answers another request of the POST (a tasks/result: receipted, or DROPPED), or returns the message as it is. */
    stampOther: (message: unknown) => Promise<unknown>,
    /** A GET resuming a POST's stream: answers to that POST's requests (other than calls) may pass. */
    resumed: boolean,
    /** The errors for the POST's other requests still unanswered when the stream ends. */
    failedRequests: (ids: Iterable<JsonRpcId>, why: string) => JsonRpcResponse[],
    /** Where the bytes read and not yet taken by the client are counted: past its limits, the stream ends as one too large. */
    hold: AnswerHold,
    /**
     * A POST's: how its stream is opened again upstream from an event id (a GET with Last-Event-ID),
     * the signal that ends the POST (its timeout, its caller gone or cancelling), and how the
     * upstream is told that the gateway gave up resuming (its requests are cancelled there).
     */
    resume?: {
      open: (lastEventId: string) => Promise<UpstreamHttpResponse>;
      signal: AbortSignal;
      abandon: (why: string) => void;
    },
  ): Promise<void> {
    const head = { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', ...headers };
    const endsWithAnswers = awaited.size > 0;
    let pending = '';
    let flushTimer: NodeJS.Immediate | undefined;
    const flush = () => {
      flushTimer = undefined;
      if (res.destroyed || (pending === '' && res.headersSent)) return;
      if (!res.headersSent) res.writeHead(200, { ...head, connection: 'keep-alive' });
      if (pending === '') res.flushHeaders();
      else res.write(pending);
      pending = '';
    };
    const headTimer = endsWithAnswers ? setTimeout(flush, HEADERS_HOLD_MS) : undefined;
    if (!endsWithAnswers) flush();
    // A client that takes nothing of what was written for the write timeout is cut (its stream with it).
    guardDrain(res, writeTimeoutMs);
    let parser = createSseParser();
    let decoder = new TextDecoder();
    let answered = false;
    /** One message of an event: stamped and receipted when it answers a request of this POST, else as it is, or DROPPED. */
    const relayed = async (message: unknown): Promise<unknown> => {
      // An error for no request (the provider could not read one) is passed on as it came.
      if (!isResponse(message) || message.id === null) return message;
      if (awaited.delete(message.id)) {
        if (call && message.id === call.callId) {
          answered = true;
          onAnswer();
          return stampOrFail(message, call, callRpcId);
        }
        return stampOther(message);
      }
      // An answer to nothing this stream's POST is waiting for: a second answer, one to a cancelled
      // request, or one under an id the provider made up (a caller's id guessed, passed off as a
      // call's answer). A call's answer replayed on a resumed stream after its receipt was written
      // (its caller had gone) never reaches a caller unreceipted either; other answers replayed on
      // a resumed stream pass.
      return resumed && !(typeof message.id === 'string' && CALL_RPC_ID.test(message.id)) ? message : DROPPED;
    };
    /** The upstream's last event id on this POST's stream, and its last `retry`: where and when a resume starts. */
    let lastEventId: string | undefined;
    let retry: string | undefined;
    const callEventId =
      call && callRpcId !== undefined
        ? createCallEventIds(
            options.sealer.sign,
            { provider: call.provider, agentId: call.identity.agentId, upstreamSession: call.upstreamSession },
            call.callId,
            callRpcId,
          )
        : undefined;
    const emit = async (events: SseEvent[]) => {
      for (const event of events) {
        if (event.id !== undefined) {
          lastEventId = resumePoint(event.id);
          // On a call's stream the client gets Plaza's ids (see createCallEventIds). Elsewhere an id
          // in their form is a provider's imitation of one, which a client must not resume from.
          if (callEventId && event.id !== '') event.id = callEventId();
          else if (looksLikeCallEventId(event.id)) delete event.id;
        }
        if (event.retry !== undefined) retry = event.retry;
        if (event.data?.includes('"notifications/tools/list_changed"')) options.onToolsChanged?.(endpointId);
        // Every event is looked at: an answer may be none this stream should carry (see relayed),
        // and no text test can tell (a key may be written "\u0072esult").
        if (event.data !== undefined) {
          let message: unknown;
          try {
            message = parseJson(event.data);
          } catch {
            // Not JSON: pass through untouched; the client decides.
          }
          // An event may hold a batch (protocol 2025-03-26): each of its messages is looked at.
          const out = Array.isArray(message)
            ? (await Promise.all(message.map(relayed))).filter((m) => m !== DROPPED)
            : await relayed(message);
          if (out === DROPPED || (Array.isArray(out) && out.length === 0 && (message as unknown[]).length > 0)) {
            // Its event id still moves the caller's resume point past it.
            if (event.id !== undefined) pending += formatSseEvent({ id: event.id });
            continue;
          }
          if (Array.isArray(out)) {
            // Written again only when something in it changed; then without what nests too deep
            // to be written (a provider's junk beside the answers, which pass as for one message).
            if (out.length !== (message as unknown[]).length || out.some((m, i) => m !== (message as unknown[])[i]))
              event.data = JSON.stringify(out.filter((m) => !nestsDeeperThan(m, MAX_JSON_DEPTH)));
          } else if (out !== message) event.data = JSON.stringify(out);
        }
        pending += formatSseEvent(event);
      }
      if (pending !== '') flushTimer ??= setImmediate(flush);
    };
    /** The stream being read: the upstream's answer, then each stream a resume opened. */
    let stream = upstream;
    let failure: string | undefined;
    let size = 0;
    /** Bytes read upstream that may still wait in the parser as the start of an event (see hold). */
    let unsettled = 0;
    let resumes = 0;
    let failedResumes = 0;
    for (;;) {
      const chunks = stream.body[Symbol.asyncIterator]();
      let tooLarge = false;
      failure = undefined;
      try {
        for (;;) {
          // A client that reads slower than the upstream writes holds the upstream's stream with it:
          // nothing more is read until the client has taken what was written (or left), so a stream
          // nobody reads costs a socket's buffers, not the upstream's whole output in memory.
          if (res.writableNeedDrain) await drainedOrClosed(res, stream.body);
          // What is held now: the start of an event still in the parser, events not yet written, and
          // what waits in the response for the client (the rest has left).
          hold.set(unsettled + pending.length + res.writableLength);
          const next = await chunks.next();
          if (next.done) {
            await emit(parser.end());
            break;
          }
          // A POST's answer is bounded as a whole, across resumes. A stream that lasts as long as the
          // upstream's (GET notifications) is bounded per event: read no faster than its client, its
          // length costs no memory, and it may run for days. (Counted from the last read that ended an event.)
          size += next.value.length;
          if (size > maxResponse) {
            stream.discard();
            tooLarge = true;
            throw new UpstreamTooLargeError(maxResponse);
          }
          unsettled += next.value.length;
          if (!hold.set(unsettled + pending.length + res.writableLength)) {
            stream.discard();
            tooLarge = true;
            throw new AnswerDroppedError(held.limits);
          }
          const events = parser.push(decoder.decode(next.value, { stream: true }));
          // An event ended in this read: every byte before it has left the parser as events, and at
          // most this read's bytes begin the next one.
          if (events.length > 0) unsettled = next.value.length;
          if (!endsWithAnswers && events.length > 0) size = 0;
          await emit(events);
          if (endsWithAnswers && awaited.size === 0) {
            drainRest(chunks, stream);
            break;
          }
        }
      } catch (error) {
        failure =
          error instanceof UpstreamTooLargeError || error instanceof AnswerDroppedError
            ? error.message
            : describeFailure(error);
      }
      // A call's stream the upstream ended before the call's answer, once it had given an event id,
      // is resumable (SEP-1699: a server may close it to have its client poll): the gateway resumes
      // it upstream itself and goes on relaying on this same stream, so the caller gets the answer
      // here as from any provider. Without an event id the stream is lost, and so is the answer.
      // (A POST without a call — a tasks/result, say — is not resumed: its requests get their
      // errors, and its client asks again.)
      if (!call || answered || !resume || resume.signal.aborted || tooLarge || lastEventId === undefined) break;
      const closed =
        failure === undefined
          ? 'the upstream closed the stream before the result'
          : `the stream from the upstream broke before the result (${failure})`;
      if (resumes >= MAX_RESUMES) {
        failure = `${closed} ${resumes + 1} times; Plaza stopped resuming it`;
        resume.abandon(failure);
        break;
      }
      let reopened: UpstreamHttpResponse | undefined;
      let refusal = '';
      while (!reopened && resumes < MAX_RESUMES && failedResumes < MAX_FAILED_RESUMES) {
        await pause(resumeDelay(retry, failedResumes), resume.signal);
        if (resume.signal.aborted) break;
        resumes++;
        const answer = await reopenStream(resume.open, lastEventId);
        if ('stream' in answer) reopened = answer.stream;
        else {
          failedResumes++;
          refusal = answer.failure;
          if (!answer.retryable) break;
        }
      }
      if (resume.signal.aborted) {
        failure = describeFailure(resume.signal.reason);
        break;
      }
      if (!reopened) {
        failure = `${closed} and did not resume it (${refusal}) in ${failedResumes} ${failedResumes === 1 ? 'try' : 'tries'}`;
        resume.abandon(failure);
        break;
      }
      failedResumes = 0;
      stream = reopened;
      parser = createSseParser();
      decoder = new TextDecoder();
    }
    if (call && !answered) {
      const why = cancelled() ? CALLER_CANCELLED : (failure ?? 'the upstream closed the stream before the result');
      await finish(call, { failure: why });
      // A cancelled request gets no answer (the caller has stopped waiting for one).
      if (!cancelled())
        pending += formatSseEvent({ event: 'message', data: JSON.stringify(failedCall(call, callRpcId, why)) });
    }
    // The POST's other requests the stream ended without answering get an error each, in-band
    // (also when it ended because the call beside them was cancelled).
    if (endsWithAnswers && awaited.size > 0) {
      const why = cancelled()
        ? 'the call sent with it was cancelled, which ended the request upstream'
        : (failure ?? 'the upstream closed the stream before answering');
      for (const error of failedRequests(awaited, why))
        pending += formatSseEvent({ event: 'message', data: JSON.stringify(error) });
    }
    clearTimeout(headTimer);
    if (flushTimer) clearImmediate(flushTimer);
    if (res.destroyed) return;
    if (res.headersSent) res.end(pending);
    else {
      res.writeHead(200, { ...head, 'content-length': Buffer.byteLength(pending) });
      res.end(pending);
    }
  }

  return Object.assign(handle, {
    endStreams() {
      stopping = true;
      for (const upstream of notificationStreams) upstream.discard();
    },
  });
}

/**
 * Runs `then` when `res` closes — at once when it closed already: a caller that left while its
 * call was being prepared (the assertion signed, task results looked up) was gone before the
 * gateway listened, and its call would otherwise go upstream for nobody and stay in flight.
 */
function whenClosed(res: ServerResponse, then: () => void): void {
  if (res.closed) then();
  else res.on('close', then);
}

/**
 * Resolves once `res` has drained its buffered writes, or closed — or the upstream's body ended
 * (the gateway's timeout, the caller's cancel, a revoked agent or a stopping server discarded it),
 * so that the relay goes on to record and end the call rather than wait for a reader.
 */
function drainedOrClosed(res: ServerResponse, body: UpstreamHttpResponse['body']): Promise<void> {
  const stream = body as unknown as {
    destroyed?: boolean;
    on?: (event: string, listener: () => void) => void;
    off?: (event: string, listener: () => void) => void;
  };
  if (res.destroyed || stream.destroyed === true) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      stream.off?.('close', done);
      stream.off?.('error', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
    stream.on?.('close', done);
    stream.on?.('error', done);
  });
}

/** Ends a POST whose requests were all cancelled: an event stream with no answer (a cancelled request gets none). */
function endUnanswered(res: ServerResponse, headers: Record<string, string>): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  res.writeHead(200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    'content-length': '0',
    ...headers,
  });
  res.end();
}

/** Sends a JSON answer, or ends the POST unanswered when nothing in it may be sent (DROPPED). */
function sendAnswers(res: ServerResponse, status: number, answers: unknown, headers: Record<string, string>): void {
  if (answers === DROPPED) endUnanswered(res, headers);
  else sendJson(res, status, answers, headers);
}

/** Why a provider's HTTP 401 failed a request, and where the caller's credential for it goes. */
function credentialRefusal(provider: string, sent: boolean): string {
  return sent
    ? `the provider '${provider}' refused the credential sent as X-PLATFORM-Upstream-Authorization (HTTP 401)`
    : `the provider '${provider}' needs a credential of its own (HTTP 401): send it as X-PLATFORM-Upstream-Authorization (plaza mcp connect ${provider} --upstream-token-env NAME)`;
}

/** Whether an upstream's 400 answer says it does not know the session (its JSON-RPC error names one). */
function forgotSession(text: string): boolean {
  const message = upstreamErrorMessage(text);
  return message !== undefined && /session/i.test(message) && !/version/i.test(message);
}

/** The message of the JSON-RPC error an upstream's refusal carries (e.g. "Bad Request: Server not initialized"), cut to 200 characters. */
function upstreamErrorMessage(text: string): string | undefined {
  try {
    const message = (JSON.parse(text) as { error?: { message?: unknown } } | null)?.error?.message;
    return typeof message === 'string' && message !== '' ? message.slice(0, 200) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * `parsed` without the answers to requests it was not asked (ids outside `asked`): the same value
 * when there are none, a shorter batch, or DROPPED when nothing is left. Other messages stay.
 */
function onlyAsked(parsed: unknown, asked: ReadonlySet<JsonRpcId>): unknown {
  // An error under id null answers no request in particular (the provider could not read it): it
  // stays, as does one with no id at all (the SDK's transport answers a GET without a session so).
  const unasked = (m: unknown) => isResponse(m) && m.id !== null && m.id !== undefined && !asked.has(m.id);
  if (!Array.isArray(parsed)) return unasked(parsed) ? DROPPED : parsed;
  if (!parsed.some(unasked)) return parsed;
  const kept = parsed.filter((m) => !unasked(m));
  return kept.length > 0 ? kept : DROPPED;
}
