import type { IncomingMessage, ServerResponse } from 'node:http';

import type { Clock } from '../src/kernel/index.ts';
import { createRevisionBridge } from './bridge/index.ts';
import { type Authorize, createCallPipeline } from './call-pipeline.ts';
import { GatewayError, sendGatewayError } from './error-table.ts';
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
import { callSecrets } from './internal/receipt-redaction.ts';
import { answerCallResume } from './passthrough/ended-call.ts';
import type { Connector, PassthroughDeps } from './passthrough/exchange.ts';
import { forward } from './passthrough/forward.ts';
import { noRequests, readPost } from './passthrough/read-post.ts';
import { whenClosed } from './passthrough/response-end.ts';
import { openSession } from './passthrough/session.ts';
import { refuseForStorage } from './passthrough/storage-refusal.ts';
import { refuseUnsent } from './passthrough/unsent-refusal.ts';
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
    if (await refuseUnsent(deps, res, post, identity)) return;
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
    await forward(
      deps,
      {
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
      },
      notificationStreams,
    );
  }

  return Object.assign(handle, {
    endStreams() {
      stopping = true;
      for (const upstream of notificationStreams) upstream.discard();
    },
  });
}
