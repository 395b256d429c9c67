/**
 * One request of `/mcp` to a connector on an agent's behalf (a list page, a resource read, a
 * prompt, a completion): the agent's AGIN card stamped on its `params._meta`, the identity
 * headers and a signed assertion on it, sent through the pooled upstream session, as a tools/call
 * goes (call-tool) but for any method.
 */
import type { IncomingMessage } from 'node:http';

import { newId } from '../../src/kernel/index.ts';
import type { CallPipeline } from '../call-pipeline.ts';
import type { AgentIdentity } from '../identity/agin-card.ts';
import { stampCallParams, UPSTREAM_AUTHORIZATION_HEADER, upstreamHeaders } from '../identity/stamp.ts';
import type { JsonRpcResponse } from '../internal/json-rpc.ts';
import type { CallContext } from '../receipt-sink.ts';
import type { UpstreamNotification } from '../upstream-client.ts';
import type { UpstreamPool } from '../upstream-pool.ts';
import type { CatalogConnector } from './catalog.ts';
import { upstreamProviderOf } from './upstream-credential.ts';

/**
 * The caller's headers a request takes upstream. Not MCP-Protocol-Version: it names the caller's
 * version with /mcp, and the pooled session speaks the one its provider agreed to (see the pool).
 */
const FORWARDED = new Set(['user-agent', 'accept-language']);

/** The caller's headers for `provider`: the forwarded ones, and its credential when it named that provider. */
export function callerHeaders(req: IncomingMessage, provider: string): Record<string, string | string[] | undefined> {
  const caller: Record<string, string | string[] | undefined> = {};
  for (const [name, value] of Object.entries(req.headers)) if (FORWARDED.has(name)) caller[name] = value;
  // The caller's credential goes only to the provider it named it for (spec §2.5: only to a provider that requires it).
  if (upstreamProviderOf(req) === provider)
    caller[UPSTREAM_AUTHORIZATION_HEADER] = req.headers[UPSTREAM_AUTHORIZATION_HEADER];
  return caller;
}

/** `_meta` keys of the protocol's own (a 2026-07-28 request's envelope: version, client, capabilities, log level). */
const PROTOCOL_META_PREFIX = 'io.modelcontextprotocol/';

/**
 * `params` without the caller's protocol envelope in `_meta`: it names the caller's revision with
 * `/mcp`, and the upstream is spoken to in the revision the pool agreed with it (a 2026-07-28
 * upstream gets the pool's own envelope). Other `_meta` keys (progress token, trace context) stay.
 */
export function withoutEnvelope<T extends { _meta?: Record<string, unknown> | undefined }>(params: T): T {
  const meta = params._meta;
  if (!meta) return params;
  let kept: Record<string, unknown> | undefined;
  for (const key of Object.keys(meta))
    if (key.startsWith(PROTOCOL_META_PREFIX)) {
      kept ??= { ...meta };
      delete kept[key];
    }
  return kept ? { ...params, _meta: kept } : params;
}

/** What askUpstream uses. */
export interface UpstreamRequestDeps {
  pipeline: CallPipeline;
  pool: UpstreamPool;
}

/** One request to a connector. */
export interface UpstreamAsk {
  /** The receipted call it belongs to; absent for a request that leaves no receipt (a list page). */
  call?: CallContext | undefined;
  identity: AgentIdentity;
  connector: CatalogConnector;
  req: IncomingMessage;
  method: string;
  params: Record<string, unknown>;
  signal: AbortSignal;
  clientCapabilities?: Record<string, unknown> | undefined;
  onNotification?: ((n: UpstreamNotification) => void) | undefined;
}

/** A context for a request that leaves no receipt: only its call id and card are read (signing, stamping). */
function unreceipted(identity: AgentIdentity, provider: string, method: string, now: number): CallContext {
  return { callId: newId('call', now), identity, provider, tool: method, startedAt: now };
}

/** Sends `ask` upstream; resolves with the upstream's JSON-RPC answer (throws UpstreamCallError when none came). */
export async function askUpstream(deps: UpstreamRequestDeps, ask: UpstreamAsk): Promise<JsonRpcResponse> {
  const { connector, identity } = ask;
  const call = ask.call ?? unreceipted(identity, connector.provider, ask.method, deps.pipeline.clock.now());
  const assertion = await deps.pipeline.sign(call, connector.url);
  const headers = upstreamHeaders(callerHeaders(ask.req, connector.provider), identity, {
    callId: call.callId,
    assertion,
  });
  if (ask.call) deps.pipeline.forwarding(ask.call);
  return deps.pool.request({
    url: connector.url,
    method: ask.method,
    params: stampCallParams(withoutEnvelope(ask.params), identity, call.callId),
    headers,
    signal: ask.signal,
    revisions: connector.protocolVersions,
    clientCapabilities: ask.clientCapabilities,
    onNotification: ask.onNotification,
    refusal: (method) =>
      `Plaza's aggregate endpoint /mcp cannot pass ${method} on to the agent during ${ask.method}; call it through /mcp/p/${connector.provider}.`,
  });
}
