/**
 * A 2026-07-28 client on `/mcp/p/<provider>` of a provider that speaks only earlier revisions.
 * Plaza answers `server/discover` from the provider's initialize, and sends each request through a
 * pooled upstream session that declared the request's client capabilities (see the upstream
 * pool); results get `resultType: "complete"`. The provider's own requests to its client during a
 * call (sampling, elicitation, roots) become `input_required` rounds for this client, whose retries
 * any instance continues (see held-rounds); its `subscriptions/listen` is the provider's
 * notification stream in a session of its own (see listen-session).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

import { GatewayError } from '../error-table.ts';
import type { AgentIdentity } from '../identity/agin-card.ts';
import { type JsonRpcId, RPC_ERRORS, rpcError } from '../internal/json-rpc.ts';
import { sendJson } from '../internal/send-json.ts';
import type { Connector } from '../passthrough/exchange.ts';
import { STATELESS_REVISION } from '../upstream/revisions.ts';
import { ENVELOPE } from '../upstream/stateless.ts';
import { UpstreamCallError } from '../upstream-client.ts';
import { identityHeaders } from './exchange.ts';
import { type BridgeDeps, type BridgeSide, forwardBridged } from './forward.ts';
import { continueRound, type HeldRound, openRound } from './held-rounds.ts';
import type { ListenDeps } from './listen.ts';
import { relayLegacyListen } from './listen-session.ts';
import { readBridgedMessage } from './read-message.ts';

/** The results that carry cache hints (`ttlMs`, `cacheScope`) in 2026-07-28. */
const CACHEABLE = new Set([
  'tools/list',
  'prompts/list',
  'resources/list',
  'resources/templates/list',
  'resources/read',
]);

/** One request of a bridged 2026-07-28 client. */
export interface ModernExchange {
  req: IncomingMessage;
  res: ServerResponse;
  identity: AgentIdentity;
  provider: string;
  connector: Connector;
}

/** Answers one request of a 2026-07-28 client to a provider of earlier revisions (see the file's comment). */
export async function serveModernClient(
  deps: BridgeDeps & { maxRequest: number; listen: ListenDeps },
  ex: ModernExchange,
): Promise<void> {
  const { req, res } = ex;
  if (req.method !== 'POST')
    throw new GatewayError(
      'method_not_allowed',
      `MCP ${STATELESS_REVISION} has no sessions or GET streams: POST each request.`,
    );
  const message = await readBridgedMessage(req, deps.maxRequest);
  if (message.kind !== 'request') return void res.writeHead(202).end();
  const { id, method } = message;
  const meta = message.params?.['_meta'];
  const envelope = typeof meta === 'object' && meta !== null ? (meta as Record<string, unknown>) : {};
  const claimed = envelope[ENVELOPE.protocolVersion];
  if (claimed !== undefined && claimed !== req.headers['mcp-protocol-version'])
    throw new GatewayError('invalid_request', 'The body names another protocol version than MCP-Protocol-Version.', id);
  const named = req.headers['mcp-method'];
  if (named !== undefined && named !== method)
    throw new GatewayError('invalid_request', 'The Mcp-Method header names another method than the body.', id);
  const declared = envelope[ENVELOPE.clientCapabilities];
  const capabilities =
    typeof declared === 'object' && declared !== null && !Array.isArray(declared)
      ? (declared as Record<string, unknown>)
      : {};
  if (method === 'server/discover') return discover(deps, ex, id, capabilities);
  if (method === 'subscriptions/listen') {
    const filter = (message.params?.['notifications'] ?? {}) as Record<string, unknown>;
    const headers = await identityHeaders(deps, ex);
    const { 'mcp-method': _m, 'mcp-name': _n, 'mcp-protocol-version': _v, ...kept } = headers;
    return relayLegacyListen(deps.listen, {
      res,
      url: ex.connector.url,
      revisions: ex.connector.protocolVersions,
      headers: kept,
      id,
      filter: typeof filter === 'object' && filter !== null ? filter : {},
      clientCapabilities: capabilities,
    });
  }
  const params = withoutEnvelope(message.params);
  // A retry that continues a round of Plaza's (see held-rounds): on whichever instance it reached.
  const held = openRound(deps.sealer, params?.['requestState'], {
    provider: ex.provider,
    agentId: ex.identity.agentId,
  });
  if (held) return continueHeldRound(deps, ex, id, method, held, params?.['inputResponses']);
  await forwardBridged(deps, { ...ex, id, method, params }, modernSide(capabilities));
}

/** Answers a retry with what the provider did next: another round, or the call's answer (receipted where the call runs). */
async function continueHeldRound(
  deps: BridgeDeps,
  ex: ModernExchange,
  id: JsonRpcId,
  method: string,
  held: HeldRound,
  inputResponses: unknown,
): Promise<void> {
  const gone = new AbortController();
  ex.res.once('close', () => gone.abort());
  const outcome = await continueRound(deps, held, inputResponses, gone.signal);
  if (outcome === undefined)
    return sendJson(
      ex.res,
      200,
      rpcError(id, RPC_ERRORS.internal, 'The request this retry continues got no further in time; send it again.'),
    );
  if ('input' in outcome)
    return sendJson(ex.res, 200, { jsonrpc: '2.0', id, result: { resultType: 'input_required', ...outcome.input } });
  const done = outcome.done;
  const result =
    done.result === undefined ? undefined : modernSide({}).result(done.result as Record<string, unknown>, method);
  sendJson(ex.res, 200, { ...done, id, ...(result === undefined ? {} : { result }) });
}

/** What a 2026-07-28 client's requests become on their way to a provider of earlier revisions, and back. */
function modernSide(clientCapabilities: Record<string, unknown>): BridgeSide {
  return {
    clientCapabilities,
    rounds: true,
    result: (result, method) => {
      const out = result['resultType'] === undefined ? { ...result, resultType: 'complete' } : result;
      // Lists and reads carry cache hints in 2026-07-28: none to reuse them by (what an agent sees may depend on its credential).
      return CACHEABLE.has(method) && out['ttlMs'] === undefined ? { ...out, ttlMs: 0, cacheScope: 'private' } : out;
    },
    refusal: (method) =>
      `Plaza passes this provider's requests to its client (MCP ${STATELESS_REVISION}) only during tools/call, at most 8 per call; ${method} is refused.`,
    headers: {},
  };
}

/** Answers server/discover from the provider's initialize (through the pooled session for these capabilities). */
async function discover(
  deps: BridgeDeps,
  ex: ModernExchange,
  id: JsonRpcId,
  clientCapabilities: Record<string, unknown>,
): Promise<void> {
  const headers = await identityHeaders(deps, ex);
  let initialized: Record<string, unknown>;
  try {
    initialized = (
      await deps.pool.initialized({
        url: ex.connector.url,
        revisions: ex.connector.protocolVersions,
        method: 'initialize',
        headers,
        clientCapabilities,
      })
    ).result;
  } catch (error) {
    const why = error instanceof UpstreamCallError ? error.message : 'the upstream failed';
    return sendJson(ex.res, 200, rpcError(id, RPC_ERRORS.internal, `Upstream failed: ${why}.`));
  }
  const result: Record<string, unknown> = {
    supportedVersions: [STATELESS_REVISION],
    capabilities: initialized['capabilities'] ?? {},
    resultType: 'complete',
    ttlMs: 0,
    cacheScope: 'private',
    _meta: { 'io.modelcontextprotocol/serverInfo': initialized['serverInfo'] ?? { name: ex.provider, version: '0' } },
  };
  if (typeof initialized['instructions'] === 'string') result['instructions'] = initialized['instructions'];
  sendJson(ex.res, 200, { jsonrpc: '2.0', id, result });
}

/** params without the envelope's keys (the provider's revision has none; its session said them). */
function withoutEnvelope(params: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  const meta = params?.['_meta'];
  if (typeof meta !== 'object' || meta === null) return params;
  const {
    [ENVELOPE.protocolVersion]: _v,
    [ENVELOPE.clientInfo]: _i,
    [ENVELOPE.clientCapabilities]: _c,
    ...rest
  } = meta as Record<string, unknown>;
  return { ...params, _meta: rest };
}
