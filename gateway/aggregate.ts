import type { IncomingMessage, ServerResponse } from 'node:http';

import type { Clock } from '../src/kernel/index.ts';
import { refusedParamHeaders, refusedShape, refuseForStorage } from './aggregate/body-refusals.ts';
import { cancellationOf, createCancellations } from './aggregate/cancellation.ts';
import { type LocalProvider, type ToolCatalog } from './aggregate/catalog.ts';
import {
  AGGREGATE_SESSION,
  clientResponses,
  type ClientSession,
  clientSessionOf,
  initializeParams,
  sealedClientSession,
} from './aggregate/client-session.ts';
import { createFanOut, DEFAULT_FAN_OUT_LIMITS, type FanOutLimits } from './aggregate/fan-out.ts';
import { answerToolCall, type FastPathDeps } from './aggregate/fast-path.ts';
import { refusedHttp } from './aggregate/http-refusals.ts';
import { serveLegacy } from './aggregate/legacy-server.ts';
import { listFingerprints } from './aggregate/list-fingerprints.ts';
import { localBus, watchedBus } from './aggregate/list-watch.ts';
import { plainToolCall, refusedMessages } from './aggregate/messages.ts';
import { aggregateMethods, type MethodDeps } from './aggregate/methods.ts';
import { createModernServer, type ModernServer } from './aggregate/modern-server.ts';
import {
  createNotificationStreams,
  DEFAULT_NOTIFICATION_STREAM_LIMITS,
  type NotificationStreamLimits,
} from './aggregate/notification-stream.ts';
import { DEFAULT_LIST_PAGE_SIZE } from './aggregate/paging.ts';
import { requestStatesOf } from './aggregate/request-state.ts';
import { createInputWaiters, waiterKey } from './bridge/input-waiters.ts';
import { allowEveryCall, type Authorize, createCallPipeline } from './call-pipeline.ts';
import { GATEWAY_ERROR_TABLE, GatewayError, gatewayErrorHeaders, sendGatewayError } from './error-table.ts';
import {
  createHeldAnswers,
  DEFAULT_HELD_ANSWER_LIMITS,
  DEFAULT_WRITE_TIMEOUT_MS,
  type HeldAnswers,
} from './held-answers.ts';
import type { AgentAuthenticator } from './identity/agin-card.ts';
import type { AssertionKey } from './identity/assertion.ts';
import { parseJson, storageUnavailable } from './internal/json-rpc.ts';
import { sendJson } from './internal/send-json.ts';
import type { ReceiptSink } from './receipt-sink.ts';
import { BODY_REFUSED, readMessageBody } from './request-body.ts';
import type { SessionSealer } from './session-sealer.ts';
import type { SharedCalls } from './shared-calls.ts';
import type { UpstreamPool } from './upstream-pool.ts';

export type { CatalogConnector, CatalogTool, LocalProvider, ToolCatalog } from './aggregate/catalog.ts';
export { TOOL_NAME_SEPARATOR } from './aggregate/catalog.ts';

/** Options of createAggregate. */
export interface AggregateOptions {
  local?: LocalProvider | undefined;
  catalog: ToolCatalog;
  agents: AgentAuthenticator;
  /** Whether an agent may make a call (see Authorize); default: every call is allowed. */
  authorize?: Authorize;
  receipts: ReceiptSink;
  pool: UpstreamPool;
  assertionKey: () => Promise<AssertionKey>;
  issuer: string;
  clock: Clock;
  serverInfo?: { name: string; version: string };
  onCall?: (endpointId: string) => void;
  /** The answer bytes this instance may hold (shared with the passthrough); default limits of its own. */
  held?: HeldAnswers;
  /** How long a client may take nothing of its answer before its connection is closed (see guardDrain). */
  writeTimeoutMs?: number;
  /** Where a 2025 client's notifications/cancelled that reached another instance finds its call (Redis in Plaza). */
  sharedCalls?: SharedCalls | undefined;
  /** How resources and prompts are gathered from the connectors (see fan-out). */
  fanOut?: Partial<FanOutLimits>;
  /**
   * The gateway's session sealer (the passthrough's): it seals a 2026-07-28 provider's
   * `requestState` for the agent, so any instance continues the round trip. Absent: a provider's
   * `input_required` answer fails the call in-band.
   */
  sealer?: (() => Promise<SessionSealer>) | undefined;
  /** How often the lists are read for changes while a client listens (2026-07-28 subscriptions/listen, a 2025 GET stream; ms, default 10 000). */
  listChangesEveryMs?: number | undefined;
  /** Items per page of /mcp's lists (tools, resources, templates, prompts; default 500). */
  listPageSize?: number | undefined;
  /** Bounds of 2025 sessions' GET streams (notification-stream.ts); defaults otherwise. */
  notificationStreams?: Partial<NotificationStreamLimits> | undefined;
  /** How long a call waits for a 2025 client's answer to a provider's request (ms; default 60 000). */
  inputTimeoutMs?: number | undefined;
}

/** Why a request's Mcp-Session-Id is refused (MCP: 404 tells the client to initialize again). */
const SESSION_UNKNOWN =
  'Session not found: this Mcp-Session-Id was not issued by /mcp to this agent; send initialize again (or no session id).';

/** Why a DELETE of a session is refused. */
const SESSION_NOT_ENDED =
  'Method not allowed: /mcp sessions are sealed, not stored, so there is nothing to end; stop sending the session id (or initialize again).';

/**
 * `/mcp`: one MCP server over every online connector — tools as `<provider>__<tool>` (from the
 * catalog, no fan-out), resources and templates as `plaza+<provider>:<uri>`, prompts as
 * `<provider>__<prompt>` (gathered from the connectors that declare them), completion, logging,
 * progress and cancellation — in revision 2026-07-28 (SDK v2's server) and the 2025 revisions
 * (SDK v1's), chosen per request as SDK v2 classifies it. Every request upstream goes through a
 * pooled upstream session with the caller's identity stamped on it (the steps of the gateway's
 * CallPipeline). A plain tools/call, either revision, is answered on a JSON fast path without an
 * SDK server. A 2025 client's `initialize` is answered with a sealed session id carrying its
 * declared capabilities (see client-session): in it, a provider's sampling, elicitation and roots
 * requests during a call are asked of the client on the call's event stream. Nothing is stored,
 * so any instance answers any request.
 */
export function createAggregate(options: AggregateOptions) {
  const serverInfo = options.serverInfo ?? { name: 'plaza', version: '1' };
  const held = options.held ?? createHeldAnswers(DEFAULT_HELD_ANSWER_LIMITS);
  const writeTimeoutMs = options.writeTimeoutMs ?? DEFAULT_WRITE_TIMEOUT_MS;
  const pipeline = createCallPipeline({
    agents: options.agents,
    authorize: options.authorize,
    assertionKey: options.assertionKey,
    issuer: options.issuer,
    receipts: options.receipts,
    clock: options.clock,
  });
  const sealer = options.sealer;
  const deps: MethodDeps = {
    pipeline,
    catalog: options.catalog,
    local: options.local,
    pool: options.pool,
    held,
    onCall: options.onCall,
    writeTimeoutMs,
    listPageSize: options.listPageSize ?? DEFAULT_LIST_PAGE_SIZE,
    fanOut: createFanOut(options.catalog, { ...DEFAULT_FAN_OUT_LIMITS, ...options.fanOut }),
    // The default hook allows everything: asking it per listed item would only cost time.
    authorizeEach: options.authorize !== undefined && options.authorize !== allowEveryCall,
    requestStates: sealer ? (agentId) => requestStatesOf(sealer, agentId) : undefined,
  };
  const methods = aggregateMethods(deps);
  const cancellations = createCancellations(options.sharedCalls);
  const waiters = createInputWaiters(options.sharedCalls);
  const fast: FastPathDeps = {
    tools: deps,
    held,
    cancellations,
    writeTimeoutMs,
    requestStates: deps.requestStates,
    waiters,
    inputTimeoutMs: options.inputTimeoutMs ?? 60_000,
  };
  // List changes (tools, resources, prompts) for both kinds of stream (2026-07-28 listens, 2025 GET streams), watched while one is open.
  const listChanges = watchedBus(localBus(), {
    everyMs: options.listChangesEveryMs ?? 10_000,
    fingerprints: () => listFingerprints(options.local, options.catalog),
  });
  const notificationStreams = createNotificationStreams(listChanges, {
    ...DEFAULT_NOTIFICATION_STREAM_LIMITS,
    ...options.notificationStreams,
  });
  let modern: Promise<ModernServer> | undefined;
  const modernServer = () => {
    modern ??= createModernServer({ methods, serverInfo, bus: listChanges });
    modern.catch(() => (modern = undefined));
    return modern;
  };

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    // The Origin and Host checks (DNS-rebinding protection, issue 33 item 5) go here, first:
    // a request they refuse is answered before its credential is even looked at.
    const identity = await pipeline.admit(req, res, {}, refuseForStorage);
    if (!identity) return;
    // A 2025 client's session (see client-session): what it declared at initialize.
    let session: ClientSession;
    try {
      session = await clientSessionOf(req, identity.agentId, sealer);
    } catch {
      return refuseForStorage(req, res);
    }
    if (session === 'unknown') return sendGatewayError(res, new GatewayError('session_gone', SESSION_UNKNOWN));
    // A sealed session keeps no state to end, so it cannot answer 404 once ended, as MCP requires
    // of an ended session: /mcp does not let clients end one (MCP allows 405 for that).
    if (session && req.method === 'DELETE')
      return sendGatewayError(res, new GatewayError('sdk_method_not_allowed', SESSION_NOT_ENDED), { allow: 'POST' });
    // A 2025 session's GET: its stream of list changes (see notification-stream).
    if (session && req.method === 'GET') return notificationStreams.serve(req, res, identity.agentId);
    if (refusedHttp(req, res)) return;
    // Integers past 2^53 in arguments and results pass as written (see parseJson).
    const read = await readMessageBody(req, res, parseJson);
    if (read === BODY_REFUSED) return;
    const parsedBody = read?.body;
    if (read !== undefined) {
      const refusal = refusedMessages(parsedBody);
      if (refusal !== undefined) {
        sendGatewayError(res, new GatewayError('invalid_request', refusal));
        return;
      }
      if (await refusedParamHeaders(options, req, res, parsedBody)) return;
      // The client's answers to requests Plaza sent it during a call: to the call waiting, wherever it runs.
      const answers = session ? clientResponses(parsedBody) : undefined;
      if (answers) {
        for (const answer of answers) waiters.answer(waiterKey(AGGREGATE_SESSION, identity.agentId, answer.id), answer);
        return void res.writeHead(202).end();
      }
      // The hot path: a plain tools/call is answered here as JSON (the transport lets a server
      // answer a POST with either JSON or SSE), validated like the SDKs' servers do, without
      // building a Server and transport per request.
      const call = plainToolCall(req, parsedBody);
      if (call && 'invalid' in call) {
        sendGatewayError(
          res,
          new GatewayError('invalid_call_params', `Invalid params for tools/call: ${call.invalid}`, call.id),
        );
        return;
      }
      if (call) {
        await answerToolCall(fast, identity, req, res, call, session);
        return;
      }
      if (refusedShape(res, parsedBody)) return;
    }
    const server = await modernServer();
    if (read !== undefined && server.isModern(req, parsedBody)) {
      await server.serve(identity, req, res, parsedBody);
      return;
    }
    // A 2025 client's cancellation: it names its request by id, which may run on another instance.
    const cancellation = cancellationOf(parsedBody);
    if (cancellation) {
      cancellations.cancel(identity.agentId, cancellation.requestId, cancellation.reason);
      res.writeHead(202).end();
      return;
    }
    const initialize = initializeParams(parsedBody);
    if (initialize && sealer) {
      // The session id goes with the SDK's answer (Node merges it into the answer's headers).
      try {
        res.setHeader('mcp-session-id', await sealedClientSession(sealer, identity.agentId, initialize));
      } catch {
        const status = GATEWAY_ERROR_TABLE.storage_unavailable.status;
        return sendJson(res, status, storageUnavailable(parsedBody), gatewayErrorHeaders('storage_unavailable'));
      }
    }
    await serveLegacy({ methods, serverInfo, cancellations }, identity, req, res, parsedBody);
  }

  return Object.assign(handle, {
    /**
     * Tells the clients listening on this instance (subscriptions/listen, 2025 GET streams) that
     * the tool list changed (the catalog learnt it from a probe or a connector's notification).
     */
    toolsChanged(): void {
      listChanges.publish({ kind: 'tools_list_changed' });
    },
    /** Ends this instance's 2025 GET streams (the server is stopping). */
    endStreams(): void {
      notificationStreams.endAll();
    },
    /** 2025 GET streams open on this instance. */
    notificationStreamCount: () => notificationStreams.openCount,
  });
}
