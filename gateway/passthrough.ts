import type { IncomingMessage, ServerResponse } from 'node:http';

import type { Clock } from '../src/kernel/index.ts';
import { createRevisionBridge } from './bridge/index.ts';
import { type Authorize, createCallPipeline } from './call-pipeline.ts';
import { GATEWAY_ERROR_TABLE, GatewayError, gatewayErrorHeaders, sendGatewayError } from './error-table.ts';
import {
  createHeldAnswers,
  DEFAULT_HELD_ANSWER_LIMITS,
  DEFAULT_WRITE_TIMEOUT_MS,
  type HeldAnswers,
} from './held-answers.ts';
import type { AgentAuthenticator, AgentIdentity } from './identity/agin-card.ts';
import type { AssertionKey } from './identity/assertion.ts';
import { UPSTREAM_AUTHORIZATION_HEADER } from './identity/stamp.ts';
import { createCallsInFlight } from './internal/calls-in-flight.ts';
import { parseJson, rpcError, storageUnavailable } from './internal/json-rpc.ts';
import { callSecrets } from './internal/receipt-redaction.ts';
import { readRequestText } from './internal/request-text.ts';
import { sendJson } from './internal/send-json.ts';
import { describeUpstreamFailure } from './internal/upstream-exchange.ts';
import { answerCallResume } from './passthrough/ended-call.ts';
import { relayStreamAnswer } from './passthrough/event-stream.ts';
import {
  CALLER_CANCELLED,
  type Connector,
  type Exchange,
  type PassthroughDeps,
  type PostRequests,
} from './passthrough/exchange.ts';
import { relayJsonAnswer } from './passthrough/json-answer.ts';
import { noRequests, readPost } from './passthrough/read-post.ts';
import { failedCall, failRequest, plazaAnswer } from './passthrough/request-answers.ts';
import { endUnanswered, whenClosed } from './passthrough/response-end.ts';
import { answerHeaders, openSession } from './passthrough/session.ts';
import { createUpstreamControl } from './passthrough/upstream-control.ts';
import { relayRefusal } from './passthrough/upstream-refusal.ts';
import { upstreamCredentialProblem, upstreamRequestHeaders } from './passthrough/upstream-request.ts';
import type { ReceiptSink } from './receipt-sink.ts';
import type { SessionSealer } from './session-sealer.ts';
import type { SharedCalls } from './shared-calls.ts';
import type { TaskDirectory } from './task-directory.ts';
import { createUpstreamHttp, type UpstreamHttp, type UpstreamHttpResponse } from './upstream-http.ts';

export type { Connector } from './passthrough/exchange.ts';
export { MAX_TASK_RESULTS_PER_POST } from './passthrough/read-post.ts';

/** Finds online connectors by provider slug. */
export interface ConnectorDirectory {
  byProvider(provider: string): Promise<Connector | undefined>;
}

/** Options of createPassthrough. */
export interface PassthroughOptions {
  directory: ConnectorDirectory;
  agents: AgentAuthenticator;
  /** Whether an agent may make a call (see Authorize); default: every call is allowed. */
  authorize?: Authorize;
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

/**
 * Answers a request while Plaza cannot read its database: 503 under the ids of the requests a
 * POST holds (storageUnavailable), once its body is read; a body that cannot be read or parsed
 * is answered as such, as it would be otherwise.
 */
async function refuseForStorage(req: IncomingMessage, res: ServerResponse, maxRequest: number): Promise<void> {
  let body: unknown;
  if (req.method === 'POST') {
    let text: string;
    try {
      text = await readRequestText(req, maxRequest);
    } catch (error) {
      // readRequestText throws only GatewayError: 413 (the rest unread), 400 cut short or not UTF-8.
      sendGatewayError(res, error as GatewayError);
      return;
    }
    try {
      body = parseJson(text);
    } catch {
      sendGatewayError(res, new GatewayError('parse_error', 'Request body is not valid JSON.'));
      return;
    }
  }
  sendJson(
    res,
    GATEWAY_ERROR_TABLE.storage_unavailable.status,
    storageUnavailable(body),
    gatewayErrorHeaders('storage_unavailable'),
  );
}

/**
 * `/mcp/p/<provider>`: one connector passed through with its own names and its whole protocol
 * (sessions, SSE, progress, server-to-client requests). Every tools/call gets a call id, the
 * agent's AGIN card in `_meta.platform`, identity headers and a signed assertion; its result gets
 * `_meta.platform` and a receipt. Failures stay in-band: a failed call is an `isError` result.
 * The steps of a call are the gateway's CallPipeline; the files of passthrough/ read the request
 * and relay each kind of answer.
 */
export function createPassthrough(options: PassthroughOptions): Passthrough {
  const pipeline = createCallPipeline({
    agents: options.agents,
    authorize: options.authorize,
    assertionKey: options.assertionKey,
    issuer: options.issuer,
    receipts: options.receipts,
    clock: options.clock,
  });
  const deps: PassthroughDeps = {
    pipeline,
    http: options.http ?? createUpstreamHttp(),
    sealer: options.sealer,
    receipts: options.receipts,
    tasks: options.tasks,
    held: options.held ?? createHeldAnswers(DEFAULT_HELD_ANSWER_LIMITS),
    inFlight: createCallsInFlight(options.sharedCalls),
    maxRequest: options.maxRequestBytes ?? 4 * 1024 * 1024,
    maxResponse: options.maxResponseBytes ?? 16 * 1024 * 1024,
    timeoutMs: options.upstreamTimeoutMs ?? 60_000,
    writeTimeoutMs: options.writeTimeoutMs ?? DEFAULT_WRITE_TIMEOUT_MS,
    onCall: options.onCall,
    onToolsChanged: options.onToolsChanged,
  };
  /** Open GET streams (server notifications), ended by endStreams; set once the server stops. */
  const notificationStreams = new Set<UpstreamHttpResponse>();
  let stopping = false;
  const bridge = createRevisionBridge({
    ...deps,
    pipeline,
    streams: notificationStreams,
    stopping: () => stopping,
    shared: options.sharedCalls,
  });
  const unverifiable = (req: IncomingMessage, res: ServerResponse) => refuseForStorage(req, res, deps.maxRequest);

  async function handle(req: IncomingMessage, res: ServerResponse, provider: string): Promise<void> {
    const identity = await pipeline.admit(req, res, { provider }, unverifiable);
    if (!identity) return;
    try {
      await serve(req, res, provider, identity);
    } catch (error) {
      if (!(error instanceof GatewayError)) throw error;
      // The table's headers (Retry-After, Connection: close for a body left unread), and what a 405 allows.
      if (!res.headersSent)
        sendGatewayError(res, error, error.code === 'method_not_allowed' ? { allow: 'GET, POST, DELETE' } : {});
    }
  }

  /** One request of an authenticated agent: checked, read, then sent upstream (see forward). */
  async function serve(
    req: IncomingMessage,
    res: ServerResponse,
    provider: string,
    identity: AgentIdentity,
  ): Promise<void> {
    let connector: Connector | undefined;
    try {
      connector = await options.directory.byProvider(provider);
    } catch {
      await unverifiable(req, res);
      return;
    }
    if (!connector) throw new GatewayError('no_connector', `No online connector for provider "${provider}".`);
    const credentialProblem = upstreamCredentialProblem(req, provider);
    if (credentialProblem) throw new GatewayError('invalid_request', credentialProblem);
    const presented = req.headers['mcp-session-id'];
    const upstreamSession = openSession(deps.sealer, presented, provider, identity.agentId);
    const method = req.method ?? 'GET';
    if (!['POST', 'GET', 'DELETE'].includes(method))
      throw new GatewayError('method_not_allowed', `Method ${method} is not allowed.`);
    // A client and a provider that share no MCP revision: Plaza speaks each one's (gateway/bridge).
    const crossing = bridge.direction(req, connector, upstreamSession);
    if (crossing) return bridge.serve(crossing, { req, res, identity, provider, connector, upstreamSession });
    if (
      answerCallResume(deps, res, {
        lastEventId: method === 'GET' ? req.headers['last-event-id'] : undefined,
        provider,
        identity,
        upstreamSession,
      })
    )
      return;
    if (method === 'GET' && stopping)
      throw new GatewayError('shutting_down', 'Plaza is shutting down; open the stream again in a moment.');

    const arrivedAt = options.clock.now();
    const secrets = callSecrets(req.headers[UPSTREAM_AUTHORIZATION_HEADER]);
    const post =
      method === 'POST'
        ? await readPost(deps, req, { identity, provider, connector, upstreamSession, secrets })
        : noRequests();
    if (await refuseUnsent(res, post, identity)) return;
    const hold = deps.held.open(identity.agentId);
    whenClosed(res, () => hold.release());
    const headers = await upstreamRequestHeaders(pipeline, {
      req,
      identity,
      call: post.call,
      audience: connector.url,
      upstreamSession,
    });
    const asked = new Set(post.awaited);
    await forward({
      ...post,
      req,
      res,
      identity,
      provider,
      connector,
      method,
      presented: typeof presented === 'string' ? presented : undefined,
      upstreamSession,
      arrivedAt,
      secrets,
      asked,
      hold,
      headers,
    });
  }

  /**
   * Answers in-band, with nothing sent upstream, a POST whose call the authorize hook refused, or
   * whose agent (or this instance) holds as many unread answers as it may: its call is receipted
   * as refused, its other requests get an error each. False when the POST may go on.
   */
  async function refuseUnsent(res: ServerResponse, post: PostRequests, identity: AgentIdentity): Promise<boolean> {
    const { call } = post;
    const busy = post.refused === undefined && post.awaited.size > 0 ? deps.held.refusal(identity.agentId) : undefined;
    const why = post.refused ?? busy;
    if (why === undefined) return false;
    const code = GATEWAY_ERROR_TABLE[post.refused === undefined ? 'held_answers_full' : 'call_refused'].rpcCode;
    if (call) await pipeline.record(call, { refused: why });
    // A policy's reason is a clause (as on /mcp, which answers it as a sentence); the held-answers refusal is one already.
    const said = post.refused === undefined ? why : `${why[0]!.toUpperCase()}${why.slice(1)}`;
    const answers = [...post.awaited].map((id) =>
      call && id === call.callId
        ? plazaAnswer(deps, post, `${said}; nothing was called.`)
        : rpcError(post.taskResults.get(String(id))?.callerId ?? id, code, `${said}; nothing was sent.`),
    );
    sendJson(res, 200, post.batch ? answers : answers[0]);
    return true;
  }

  /** Sends the request upstream and relays the answer as its kind asks. */
  async function forward(ex: Exchange): Promise<void> {
    const { res, call } = ex;
    const control = createUpstreamControl(deps, ex);
    let upstream: UpstreamHttpResponse;
    if (call) pipeline.forwarding(call);
    try {
      upstream = await deps.http(ex.connector.url, {
        method: ex.method,
        headers: ex.headers,
        body: ex.body,
        signal: control.signal,
      });
    } catch (error) {
      // Failed on its way (a timeout or a caller gone told the provider already).
      control.answered();
      control.answeredWhole();
      control.stopTimer();
      const why = control.cancelled ? CALLER_CANCELLED : describeUpstreamFailure(error);
      if (call) {
        await pipeline.record(call, { failure: why });
        sendJson(res, 200, failedCall(deps, ex, why));
      } else if (control.allCancelled) endUnanswered(res, {});
      else failRequest(ex, why, {}, 502);
      return;
    } finally {
      // The cancellation went upstream (under the call's id there); the call ends now, receipted
      // as cancelled, rather than wait for an answer the upstream will not send.
      for (const inCall of ex.cancelling) inCall.cancel();
    }
    const responseHeaders = answerHeaders(deps.sealer, ex, upstream);
    const type = upstream.header('content-type') ?? '';
    // Anything but an event stream is the provider's whole answer (or refusal) to the request.
    if (!type.startsWith('text/event-stream')) {
      control.answered();
      control.answeredWhole();
    }
    const ok = upstream.status >= 200 && upstream.status <= 299;
    if (!ok || upstream.status === 202 || upstream.status === 204)
      await relayRefusal(deps, ex, control, upstream, responseHeaders);
    else if (type.startsWith('text/event-stream')) {
      await relayStreamAnswer(deps, ex, control, {
        upstream,
        responseHeaders,
        upstreamSessionOut: upstream.header('mcp-session-id'),
        // Rechecked at the endpoint it was sent to (an OAuth token's audience).
        authenticate: (request) => pipeline.authenticate(request, { provider: ex.provider }),
        notificationStreams,
      });
    } else await relayJsonAnswer(deps, ex, control, upstream, responseHeaders);
  }

  return Object.assign(handle, {
    endStreams() {
      stopping = true;
      for (const upstream of notificationStreams) upstream.discard();
    },
  });
}
