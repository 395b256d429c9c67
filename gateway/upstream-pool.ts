import { hash, randomUUID } from 'node:crypto';

import { RPC_ERRORS } from './internal/json-rpc.ts';
import {
  requestUpstream,
  SessionExpiredError,
  UPSTREAM_PROTOCOL_VERSION,
  UpstreamCallError,
  type UpstreamNotification,
  type UpstreamServerRequest,
} from './upstream-client.ts';
import { createUpstreamHttp, type UpstreamHttp } from './upstream-http.ts';

/** Options of createUpstreamPool. */
export interface UpstreamPoolOptions {
  /** Outbound HTTP (SSRF-guarded in production); default undici's global pool. */
  http?: UpstreamHttp;
  timeoutMs?: number;
  maxResponseBytes?: number;
  clientInfo?: { name: string; version: string };
  /** Most sessions held at once; the least recently used one is ended (DELETE) past it. Default 1000. */
  maxSessions?: number;
}

interface PooledSession {
  url: string;
  /** The set-up headers (the caller's third-party credential, if any): the DELETE at eviction needs them. */
  headers: Record<string, string>;
  ready: Promise<{ sessionId: string | null; protocolVersion: string }>;
}

/** One call sent through a pooled upstream session. */
export interface PooledCall {
  url: string;
  method: string;
  params?: unknown;
  /** Per-call headers (identity, assertion, third-party Authorization). */
  headers: Record<string, string>;
  signal?: AbortSignal;
  onNotification?: (n: UpstreamNotification) => void;
  /**
   * Why the upstream's requests to its client during this call (roots/list, sampling,
   * elicitation) are refused, in words for the upstream (and the agent it may tell), by method.
   */
  refusal?: (method: string) => string;
  /** Told the size of the call's answer read so far (see UpstreamRequest.onBytes). */
  onBytes?: (size: number) => string | undefined;
  /** The revisions the upstream offers (the catalog's record), newest first; absent: unknown. */
  revisions?: readonly string[] | undefined;
  /** The capabilities of the client the request is made for (a 2026-07-28 request declares them). */
  clientCapabilities?: Record<string, unknown> | undefined;
}

/**
 * Upstream MCP sessions shared by all agents' calls to a connector: one `initialize` per upstream
 * URL, reused until the upstream forgets it (HTTP 404), then re-initialised transparently and the
 * call retried once. Sessions are per instance; Plaza's own session ids never depend on them.
 */
export function createUpstreamPool(options: UpstreamPoolOptions = {}) {
  const http = options.http ?? createUpstreamHttp();
  const timeoutMs = options.timeoutMs ?? 60_000;
  const maxBytes = options.maxResponseBytes ?? 16 * 1024 * 1024;
  const clientInfo = options.clientInfo ?? { name: 'plaza-gateway', version: '1' };
  const maxSessions = options.maxSessions ?? 1000;
  if (!(Number.isInteger(maxSessions) && maxSessions >= 1))
    throw new TypeError('maxSessions must be a whole number >= 1');
  // In least-recently-used order: a session is moved to the end on every use. Keys hold the
  // caller's credential (hashed), so callers choose how many there are: the cap bounds them.
  const sessions = new Map<string, PooledSession>();

  async function open(
    url: string,
    headers: Record<string, string>,
  ): Promise<{ sessionId: string | null; protocolVersion: string }> {
    const { response, sessionId } = await withDeadline(timeoutMs, undefined, (signal) =>
      requestUpstream(http, {
        url,
        message: {
          jsonrpc: '2.0',
          id: randomUUID(),
          method: 'initialize',
          params: { protocolVersion: UPSTREAM_PROTOCOL_VERSION, capabilities: {}, clientInfo },
        },
        headers,
        signal,
        // MCP allows only a ping before initialization ends; the version is not agreed yet.
        onRequest: (r, id) => answer(url, sessionHeaders(headers, id, UPSTREAM_PROTOCOL_VERSION), r),
        maxBytes,
      }),
    );
    if (response.error) throw new UpstreamCallError(`the upstream refused initialize: ${response.error.message}`);
    const protocolVersion = String(
      (response.result as { protocolVersion?: unknown } | undefined)?.protocolVersion ?? UPSTREAM_PROTOCOL_VERSION,
    );
    const notifyHeaders: Record<string, string> = {
      ...headers,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': protocolVersion,
    };
    if (sessionId) notifyHeaders['mcp-session-id'] = sessionId;
    const notified = await withDeadline(timeoutMs, undefined, (signal) =>
      http(url, {
        method: 'POST',
        headers: notifyHeaders,
        body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
        signal,
      }),
    ).catch((error: unknown) => {
      throw new UpstreamCallError('the upstream failed after initialize', { cause: error });
    });
    notified.discard();
    return { sessionId, protocolVersion };
  }

  function session(key: string, url: string, headers: Record<string, string>) {
    const entry = sessions.get(key);
    if (entry) {
      sessions.delete(key);
      sessions.set(key, entry);
      return entry.ready;
    }
    const created: PooledSession = { url, headers, ready: open(url, headers) };
    sessions.set(key, created);
    created.ready.catch(() => {
      if (sessions.get(key) === created) sessions.delete(key);
    });
    while (sessions.size > maxSessions) {
      const [oldest, evicted] = sessions.entries().next().value!;
      sessions.delete(oldest);
      end(evicted);
    }
    return created.ready;
  }

  /** Tells the upstream a session is over (best effort: it forgets idle sessions anyway). */
  function end(evicted: PooledSession): void {
    void evicted.ready
      .then(async ({ sessionId, protocolVersion }) => {
        if (!sessionId) return;
        const headers = { ...evicted.headers, 'mcp-session-id': sessionId, 'mcp-protocol-version': protocolVersion };
        const answer = await withDeadline(timeoutMs, undefined, (signal) =>
          http(evicted.url, { method: 'DELETE', headers, signal }),
        );
        answer.discard();
      })
      .catch(() => undefined);
  }

  async function attempt(call: PooledCall, retry: boolean) {
    const key = sessionKey(call.url, call.headers);
    const s0 = session(key, call.url, stripCallHeaders(call.headers));
    const s = await s0;
    const headers: Record<string, string> = { ...call.headers, 'mcp-protocol-version': s.protocolVersion };
    if (s.sessionId) headers['mcp-session-id'] = s.sessionId;
    const message = { jsonrpc: '2.0' as const, id: randomUUID(), method: call.method, params: call.params };
    let stopped: AbortSignal | undefined;
    try {
      return (
        await withDeadline(timeoutMs, call.signal, (signal) =>
          requestUpstream(http, {
            url: call.url,
            message,
            headers,
            signal,
            onNotification: call.onNotification,
            // In the session the call went in: the answer's Mcp-Session-Id is the same one.
            onRequest: (r) =>
              answer(
                call.url,
                sessionHeaders(stripCallHeaders(call.headers), s.sessionId, s.protocolVersion),
                r,
                call.refusal,
              ),
            maxBytes,
            onBytes: call.onBytes,
          }).catch((error: unknown) => {
            if (signal.aborted) stopped = signal;
            throw error;
          }),
        )
      ).response;
    } catch (error) {
      if (error instanceof SessionExpiredError && retry) {
        if (sessions.get(key)?.ready === s0) sessions.delete(key);
        return attempt(call, false);
      }
      // Plaza stopped waiting (its timeout, or its caller left): MCP has a requestor say so, and
      // the upstream may then stop the work. Only a session names the request to the upstream.
      if (stopped && s.sessionId)
        cancel(
          call.url,
          sessionHeaders(stripCallHeaders(call.headers), s.sessionId, s.protocolVersion),
          message.id,
          stopped,
        );
      throw error;
    }
  }

  /** Sends notifications/cancelled for a request Plaza stopped waiting for (best effort). */
  function cancel(url: string, headers: Record<string, string>, requestId: string, stopped: AbortSignal): void {
    const reason =
      (stopped.reason as { name?: unknown } | undefined)?.name === 'TimeoutError'
        ? 'Plaza stopped waiting for the answer (timeout).'
        : 'The caller went away.';
    post(url, headers, { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId, reason } });
  }

  /**
   * Answers a request the upstream sent its client, at once: Plaza's pooled session declared no
   * client capabilities and is shared by every agent, so it answers ping and refuses the rest
   * (-32601) rather than leave the upstream waiting for its own timeout (see
   * docs/decisions/gateway.md, "/mcp answers an upstream's requests itself").
   */
  function answer(
    url: string,
    headers: Record<string, string>,
    request: UpstreamServerRequest,
    refusal?: (method: string) => string,
  ): void {
    const method = request.method.slice(0, 100);
    post(
      url,
      headers,
      request.method === 'ping'
        ? { jsonrpc: '2.0', id: request.id, result: {} }
        : {
            jsonrpc: '2.0',
            id: request.id,
            error: {
              code: RPC_ERRORS.methodNotFound,
              message: refusal?.(method) ?? `Plaza's pooled session does not support ${method}.`,
            },
          },
    );
  }

  /** POSTs one message in a session, within the pool's timeout, ignoring the answer (best effort). */
  function post(url: string, headers: Record<string, string>, message: unknown): void {
    const body = JSON.stringify(message);
    void withDeadline(timeoutMs, undefined, (signal) =>
      http(url, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body,
        signal,
      }),
    )
      .then((res) => res.discard())
      .catch(() => undefined);
  }

  return {
    /** Sends one request through the connector's pooled session. */
    request: (call: PooledCall) => attempt(call, true),
    /** Forgets every pooled session. */
    clear: () => sessions.clear(),
    /** How many sessions are held (tests). */
    size: () => sessions.size,
  };
}

/**
 * Runs `work` with a signal that aborts after `timeoutMs` or when `outer` does. One controller
 * and one timer, cleared when the work ends: cheaper per call than AbortSignal.timeout + .any,
 * whose composite signals are tracked until collected.
 */
async function withDeadline<T>(
  timeoutMs: number,
  outer: AbortSignal | undefined,
  work: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const controller = new AbortController();
  const timer = setTimeout(
    () => controller.abort(new DOMException('The upstream did not answer in time.', 'TimeoutError')),
    timeoutMs,
  );
  const follow = () => controller.abort(outer?.reason);
  if (outer?.aborted) follow();
  else outer?.addEventListener('abort', follow, { once: true });
  try {
    return await work(controller.signal);
  } finally {
    clearTimeout(timer);
    outer?.removeEventListener('abort', follow);
  }
}

/** Sessions are shared per upstream URL and third-party credential (upstreams may bind them). */
function sessionKey(url: string, headers: Record<string, string>): string {
  const credential = headers['authorization'];
  return credential ? `${url}\n${hash('sha256', credential, 'hex')}` : `${url}\n`;
}

/** `headers` with the session's id (when the upstream gave one) and protocol version. */
function sessionHeaders(
  headers: Record<string, string>,
  sessionId: string | null,
  protocolVersion: string,
): Record<string, string> {
  const out: Record<string, string> = { ...headers, 'mcp-protocol-version': protocolVersion };
  if (sessionId) out['mcp-session-id'] = sessionId;
  return out;
}

/**
 * Session set-up carries no per-call identity: it is shared by every caller with the same
 * credential. Nor the caller's MCP-Protocol-Version: that names the caller's session with `/mcp`,
 * not the pooled one (which has its own, once initialized). Sent with `initialize`, a version the
 * provider does not support would have it refuse the session (the Go SDK checks the header on
 * every POST, 400), for a version it was never asked to speak.
 */
function stripCallHeaders(headers: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (name.startsWith('x-platform-') || name === 'mcp-protocol-version') continue;
    out[name] = value;
  }
  return out;
}

/** A pool of upstream sessions. */
export type UpstreamPool = ReturnType<typeof createUpstreamPool>;
