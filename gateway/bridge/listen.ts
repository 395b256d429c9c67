/**
 * A 2025 client's notification stream (GET) on a provider that speaks only 2026-07-28: Plaza opens
 * `subscriptions/listen` upstream (list changes of tools, prompts and resources; the envelope from
 * the client's initialize) and relays its notifications as the GET stream's events, the
 * provider's acknowledgement left out. The stream ends when either side ends it; it is read no
 * faster than the client takes it.
 */
import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';

import { GatewayError } from '../error-table.ts';
import { isResponse } from '../internal/json-rpc.ts';
import { STATELESS_REVISION } from '../upstream/revisions.ts';
import { PLAZA_CLIENT_INFO, statelessRequest } from '../upstream/stateless.ts';
import type { UpstreamHttp, UpstreamHttpResponse } from '../upstream-http.ts';
import type { BridgeSession } from './bridge-session.ts';
import { END_RELAY, relayEvents } from './event-relay.ts';

/** What relaying a listen stream needs. */
export interface ListenDeps {
  http: UpstreamHttp;
  /** Time to the upstream's answer headers. */
  timeoutMs: number;
  /** Most characters of one event. */
  maxEvent: number;
  /** Open notification streams, ended when the server stops (see Passthrough.endStreams). */
  streams: Set<UpstreamHttpResponse>;
}

const EVERY_LIST: Record<string, boolean> = {
  toolsListChanged: true,
  promptsListChanged: true,
  resourcesListChanged: true,
};

/** Relays a subscriptions/listen stream as `res`, a GET's notification stream (see the file's comment). */
export async function relayListen(
  deps: ListenDeps,
  request: { res: ServerResponse; url: string; headers: Record<string, string>; session: BridgeSession },
): Promise<void> {
  const { res, session } = request;
  const sent = statelessRequest({
    revision: STATELESS_REVISION,
    method: 'subscriptions/listen',
    params: { notifications: EVERY_LIST },
    headers: request.headers,
    clientInfo: PLAZA_CLIENT_INFO,
    clientCapabilities: session.capabilities,
  });
  const stop = new AbortController();
  // Closing the stream ends the subscription (2026-07-28 over HTTP).
  res.once('close', () => stop.abort());
  const timer = setTimeout(() => stop.abort(), deps.timeoutMs);
  let upstream: UpstreamHttpResponse;
  try {
    upstream = await deps.http(request.url, {
      method: 'POST',
      headers: { ...sent.headers, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: randomUUID(), method: 'subscriptions/listen', params: sent.params }),
      signal: stop.signal,
    });
  } catch {
    throw noStream('the provider did not open one');
  } finally {
    clearTimeout(timer);
  }
  if (upstream.status !== 200 || !(upstream.header('content-type') ?? '').startsWith('text/event-stream')) {
    upstream.discard();
    throw noStream(`the provider answered subscriptions/listen with HTTP ${upstream.status}`);
  }
  deps.streams.add(upstream);
  try {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    res.flushHeaders();
    await relayEvents(upstream, res, deps.maxEvent, (message) => {
      // The listen request's result: the provider ended the subscription.
      if (isResponse(message)) return END_RELAY;
      const method = (message as { method?: unknown }).method;
      return typeof method !== 'string' || method === 'notifications/subscriptions/acknowledged' ? undefined : message;
    });
  } finally {
    deps.streams.delete(upstream);
    upstream.discard();
    if (!res.writableEnded) res.end();
  }
}

function noStream(why: string): GatewayError {
  return new GatewayError(
    'method_not_allowed',
    `No notification stream for this provider (MCP 2026-07-28 only): ${why}. Requests still work.`,
  );
}
