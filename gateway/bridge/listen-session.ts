/**
 * A 2026-07-28 client's `subscriptions/listen` on a provider of an earlier revision: Plaza opens a
 * session of the listen's own with the provider (a provider's notification stream belongs to one
 * session, and a pooled session's is not Plaza's to take), opens its GET stream, acknowledges the
 * part of the client's filter the provider's capabilities honor (list changes of tools, prompts,
 * resources), and relays those notifications, each naming the subscription, until either side ends
 * it; then the provider's session is ended (DELETE).
 */
import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';

import { type JsonRpcId, RPC_ERRORS, rpcError } from '../internal/json-rpc.ts';
import { sendJson } from '../internal/send-json.ts';
import { upstreamMode } from '../upstream/revisions.ts';
import { PLAZA_CLIENT_INFO } from '../upstream/stateless.ts';
import { requestUpstream } from '../upstream-client.ts';
import { relayEvents } from './event-relay.ts';
import type { ListenDeps } from './listen.ts';

const SUBSCRIPTION_ID = 'io.modelcontextprotocol/subscriptionId';
/** Filter flags, the capability that honors each, and the notification each lets through. */
const LISTS = [
  ['toolsListChanged', 'tools', 'notifications/tools/list_changed'],
  ['promptsListChanged', 'prompts', 'notifications/prompts/list_changed'],
  ['resourcesListChanged', 'resources', 'notifications/resources/list_changed'],
] as const;

/** One listen request of a 2026-07-28 client. */
export interface LegacyListen {
  res: ServerResponse;
  url: string;
  revisions: readonly string[] | undefined;
  /** The identity headers (no call): the session's set-up and GET. */
  headers: Record<string, string>;
  id: JsonRpcId;
  filter: Record<string, unknown>;
  clientCapabilities: Record<string, unknown>;
}

/** Serves the listen (see the file's comment). */
export async function relayLegacyListen(deps: ListenDeps, listen: LegacyListen): Promise<void> {
  const { res, url } = listen;
  const stop = new AbortController();
  res.once('close', () => stop.abort());
  const opened = await openSession(deps, listen, stop.signal).catch(() => undefined);
  if (!opened) return refuse(listen, 'the provider opened no session for it');
  const { session, capabilities } = opened;
  const timer = setTimeout(() => stop.abort(), deps.timeoutMs);
  const upstream = await deps
    .http(url, { method: 'GET', headers: { ...session, accept: 'text/event-stream' }, signal: stop.signal })
    .catch(() => undefined)
    .finally(() => clearTimeout(timer));
  if (
    !upstream ||
    upstream.status !== 200 ||
    !(upstream.header('content-type') ?? '').startsWith('text/event-stream')
  ) {
    upstream?.discard();
    end(deps, url, session);
    return refuse(listen, 'the provider offers no notification stream');
  }
  const honored: Record<string, boolean> = {};
  const passed = new Set<string>();
  for (const [flag, capability, method] of LISTS) {
    const offered = (capabilities[capability] as { listChanged?: unknown } | undefined)?.listChanged === true;
    if (listen.filter[flag] === true && offered) {
      honored[flag] = true;
      passed.add(method);
    }
  }
  const meta = { [SUBSCRIPTION_ID]: listen.id };
  deps.streams.add(upstream);
  try {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    res.write(
      `event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/subscriptions/acknowledged', params: { notifications: honored, _meta: meta } })}\n\n`,
    );
    await relayEvents(upstream, res, deps.maxEvent, (message) => {
      const m = message as { method?: unknown; id?: unknown; params?: Record<string, unknown> };
      if (typeof m.method !== 'string' || m.id !== undefined || !passed.has(m.method)) return undefined;
      return {
        jsonrpc: '2.0',
        method: m.method,
        params: { ...m.params, _meta: { ...(m.params?.['_meta'] as object), ...meta } },
      };
    });
    // The provider's stream ended (or the server stops): the subscription ends gracefully.
    if (!res.destroyed)
      res.write(
        `event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', id: listen.id, result: { resultType: 'complete', _meta: meta } })}\n\n`,
      );
  } finally {
    deps.streams.delete(upstream);
    upstream.discard();
    end(deps, url, session);
    if (!res.writableEnded) res.end();
  }
}

/** Opens the listen's own session: its headers for later requests, and the provider's capabilities. */
async function openSession(deps: ListenDeps, listen: LegacyListen, signal: AbortSignal) {
  const revision = upstreamMode(listen.revisions).revision;
  const { response, sessionId } = await requestUpstream(deps.http, {
    url: listen.url,
    message: {
      jsonrpc: '2.0',
      id: randomUUID(),
      method: 'initialize',
      params: { protocolVersion: revision, capabilities: listen.clientCapabilities, clientInfo: PLAZA_CLIENT_INFO },
    },
    headers: listen.headers,
    signal: AbortSignal.any([signal, AbortSignal.timeout(deps.timeoutMs)]),
    maxBytes: 1024 * 1024,
  });
  if (response.error || !sessionId) return undefined;
  const result = (response.result ?? {}) as { protocolVersion?: unknown; capabilities?: unknown };
  const session: Record<string, string> = {
    ...listen.headers,
    'mcp-session-id': sessionId,
    'mcp-protocol-version': typeof result.protocolVersion === 'string' ? result.protocolVersion : revision,
  };
  const notified = await deps.http(listen.url, {
    method: 'POST',
    headers: { ...session, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
    signal: AbortSignal.any([signal, AbortSignal.timeout(deps.timeoutMs)]),
  });
  notified.discard();
  const capabilities = (
    typeof result.capabilities === 'object' && result.capabilities !== null ? result.capabilities : {}
  ) as Record<string, unknown>;
  return { session, capabilities };
}

/** Ends the listen's session with the provider (best effort). */
function end(deps: ListenDeps, url: string, session: Record<string, string>): void {
  void deps
    .http(url, { method: 'DELETE', headers: session, signal: AbortSignal.timeout(deps.timeoutMs) })
    .then((res) => res.discard())
    .catch(() => undefined);
}

function refuse(listen: LegacyListen, why: string): void {
  if (listen.res.headersSent || listen.res.destroyed) return;
  sendJson(
    listen.res,
    200,
    rpcError(
      listen.id,
      RPC_ERRORS.methodNotFound,
      `No subscription for this provider (an MCP revision before 2026-07-28): ${why}.`,
    ),
  );
}
