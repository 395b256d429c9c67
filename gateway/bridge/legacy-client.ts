/**
 * A client of a revision before 2026-07-28 on `/mcp/p/<provider>` of a provider that speaks only
 * 2026-07-28. Plaza is the client's server: it answers `initialize` itself (the provider's
 * capabilities and serverInfo from its `server/discover`) with a sealed session that carries what
 * the client said (see bridge-session), answers ping and takes notifications, and sends each other
 * request to the provider stateless, the envelope built from the client's initialize. Results lose
 * `resultType`; a result asking the client for input (`input_required`) is asked of the client on
 * the request's event stream, as its revision has a server ask (see input-rounds), and the client's
 * answer, a POST of its own, reaches the waiting call from any instance. The client's notification
 * stream (GET) is the provider's `subscriptions/listen` (see listen).
 */

import { GatewayError } from '../error-table.ts';
import { callKey } from '../internal/calls-in-flight.ts';
import { type JsonRpcId, RPC_ERRORS, rpcError } from '../internal/json-rpc.ts';
import { sendJson } from '../internal/send-json.ts';
import type { SessionSealer } from '../session-sealer.ts';
import { DEFAULT_SESSION_REVISION } from '../upstream/revisions.ts';
import { UpstreamCallError } from '../upstream-client.ts';
import {
  type BridgeSession,
  bridgeSessionId,
  bridgeSessionOf,
  isBridgeSession,
  openBridgeSession,
} from './bridge-session.ts';
import { type BridgedExchange, identityHeaders } from './exchange.ts';
import { type BridgeDeps, type BridgeSide, forwardBridged } from './forward.ts';
import { waiterKey } from './input-waiters.ts';
import { type ListenDeps, relayListen } from './listen.ts';
import { readBridgedMessage } from './read-message.ts';

/** One request of a bridged 2025 client. */
export type LegacyExchange = BridgedExchange;

const NO_SESSION: BridgeSession = {
  protocolVersion: DEFAULT_SESSION_REVISION,
  clientInfo: { name: 'unknown', version: '0' },
  capabilities: {},
};

/** Answers one request of a 2025 client to a 2026-only provider (see the file's comment). */
export async function serveLegacyClient(
  deps: BridgeDeps & { sealer: SessionSealer; maxRequest: number; listen: ListenDeps; stopping: () => boolean },
  ex: LegacyExchange,
): Promise<void> {
  const { req, res } = ex;
  const session = isBridgeSession(ex.upstreamSession) ? openBridgeSession(ex.upstreamSession) : NO_SESSION;
  // The session is Plaza's alone: nothing upstream to end.
  if (req.method === 'DELETE') return void res.writeHead(200).end();
  if (req.method === 'GET') {
    if (deps.stopping())
      throw new GatewayError('shutting_down', 'Plaza is shutting down; open the stream again in a moment.');
    const headers = await identityHeaders(deps, ex);
    delete headers['last-event-id'];
    return relayListen(deps.listen, { res, url: ex.connector.url, headers, session });
  }
  const message = await readBridgedMessage(req, deps.maxRequest);
  // The client's answer to a request Plaza sent it during a call: to the call waiting for it, wherever it is.
  if (message.kind === 'response')
    deps.waiters.answer(waiterKey(ex.provider, ex.identity.agentId, message.id), message.message);
  // The client cancels a request of its own: wherever it runs, its stream upstream is closed.
  if (message.kind === 'other' && message.method === 'notifications/cancelled') {
    const requestId = (message.params as { requestId?: unknown } | undefined)?.requestId;
    deps.inFlight.cancelling(cancelKey(ex, requestId))?.cancel();
  }
  if (message.kind !== 'request') return void res.writeHead(202).end();
  const { id, method, params } = message;
  if (method === 'initialize') return initialize(deps, ex, id, params);
  if (method === 'ping') return sendJson(res, 200, { jsonrpc: '2.0', id, result: {} });
  await forwardBridged(
    deps,
    { ...ex, id, method, params, cancelKey: cancelKey(ex, id) },
    legacySide(session, ex.provider),
  );
}

/** Where a request of this client's session is found by its notifications/cancelled. */
function cancelKey(ex: LegacyExchange, requestId: unknown): string {
  return callKey(ex.provider, ex.identity.agentId, ex.upstreamSession ?? '', requestId);
}

/** What a 2025 client's requests become on their way to a 2026-only provider, and back. */
function legacySide(session: BridgeSession, provider: string): BridgeSide {
  return {
    clientCapabilities: session.capabilities,
    result: ({ resultType: _taken, ...rest }) => rest,
    input: {
      refused: (why) =>
        `provider "${provider}" asked for the client's input (input_required, MCP 2026-07-28), but ${why}`,
    },
    refusal: (method) => `Plaza does not pass ${method} to a client of MCP ${session.protocolVersion} here.`,
    headers: {},
  };
}

/** Answers initialize from the provider's server/discover, with a sealed session carrying what the client said. */
async function initialize(
  deps: BridgeDeps & { sealer: SessionSealer },
  ex: LegacyExchange,
  id: JsonRpcId,
  params: Record<string, unknown> | undefined,
): Promise<void> {
  const session = bridgeSessionOf(params);
  const headers = await identityHeaders(deps, ex);
  let discovered: Record<string, unknown>;
  try {
    const response = await deps.pool.request({
      url: ex.connector.url,
      revisions: ex.connector.protocolVersions,
      method: 'server/discover',
      params: {},
      headers,
      clientCapabilities: session.capabilities,
    });
    if (response.error) throw new UpstreamCallError(`server/discover failed: ${response.error.message}`);
    discovered = (response.result ?? {}) as Record<string, unknown>;
  } catch (error) {
    const why = error instanceof UpstreamCallError ? error.message : 'the upstream failed';
    return sendJson(ex.res, 200, rpcError(id, RPC_ERRORS.internal, `Upstream failed: ${why}.`));
  }
  const meta = discovered['_meta'] as Record<string, unknown> | undefined;
  const serverInfo = meta?.['io.modelcontextprotocol/serverInfo'] ??
    discovered['serverInfo'] ?? { name: ex.provider, version: '0' };
  const result: Record<string, unknown> = {
    protocolVersion: session.protocolVersion,
    capabilities: discovered['capabilities'] ?? {},
    serverInfo,
  };
  if (typeof discovered['instructions'] === 'string') result['instructions'] = discovered['instructions'];
  const sealed = deps.sealer.seal({
    provider: ex.provider,
    agentId: ex.identity.agentId,
    upstreamSessionId: bridgeSessionId(session),
  });
  sendJson(ex.res, 200, { jsonrpc: '2.0', id, result }, { 'mcp-session-id': sealed });
}
