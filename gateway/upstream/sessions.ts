/**
 * Upstream MCP sessions (the revisions before 2026-07-28) shared by all agents' calls to a
 * connector: one `initialize` per upstream URL, credential, revision and declared client
 * capabilities, reused until the upstream forgets it (HTTP 404), then re-initialised transparently
 * and the call retried once. Sessions are per instance; Plaza's own session ids never depend on them.
 */
import { hash, randomUUID } from 'node:crypto';

import { RPC_ERRORS } from '../internal/json-rpc.ts';
import {
  requestUpstream,
  SessionExpiredError,
  UpstreamCallError,
  type UpstreamServerRequest,
} from '../upstream-client.ts';
import type { UpstreamHttp } from '../upstream-http.ts';
import { withDeadline } from './deadline.ts';
import { refusesRevision, supportedRevisions } from './error-answer.ts';
import type { PooledCall } from './pooled-call.ts';

/** What the session pool needs of the pool's options, resolved. */
export interface SessionPoolOptions {
  http: UpstreamHttp;
  timeoutMs: number;
  maxBytes: number;
  clientInfo: { name: string; version: string };
  maxSessions: number;
}

/** The upstream refused `initialize` as an unsupported version: it may speak only a stateless revision. */
export class RevisionRefusedError extends UpstreamCallError {
  /** The revisions it named (a -32022's `data.supported`), if any. */
  readonly supported: string[];
  constructor(message: string, supported: string[]) {
    super(message);
    this.name = 'RevisionRefusedError';
    this.supported = supported;
  }
}

/** What initialize agreed. */
export interface OpenedSession {
  sessionId: string | null;
  protocolVersion: string;
  /** The upstream's initialize result (capabilities, serverInfo, instructions). */
  result: Record<string, unknown>;
}

interface PooledSession {
  url: string;
  /** The set-up headers (the caller's third-party credential, if any): the DELETE at eviction needs them. */
  headers: Record<string, string>;
  ready: Promise<OpenedSession>;
}

const NO_CAPABILITIES = {};

/** Builds the session pool; see the file's comment. */
export function createSessionPool(options: SessionPoolOptions) {
  const { http, timeoutMs, maxBytes, clientInfo, maxSessions } = options;
  // In least-recently-used order: a session is moved to the end on every use. Keys hold the
  // caller's credential (hashed), so callers choose how many there are: the cap bounds them.
  const sessions = new Map<string, PooledSession>();

  async function open(
    url: string,
    headers: Record<string, string>,
    revision: string,
    capabilities: Record<string, unknown>,
  ): Promise<OpenedSession> {
    const { response, sessionId } = await withDeadline(timeoutMs, undefined, (signal) =>
      requestUpstream(http, {
        url,
        message: {
          jsonrpc: '2.0',
          id: randomUUID(),
          method: 'initialize',
          params: { protocolVersion: revision, capabilities, clientInfo },
        },
        headers,
        signal,
        // MCP allows only a ping before initialization ends; the version is not agreed yet.
        onRequest: (r, id) => answer(url, sessionHeaders(headers, id, revision), r),
        maxBytes,
        errorAnswers: true,
      }),
    );
    if (response.error) {
      const why = `the upstream refused initialize: ${response.error.message}`;
      if (refusesRevision(response)) throw new RevisionRefusedError(why, supportedRevisions(response));
      throw new UpstreamCallError(why);
    }
    const result = (response.result ?? {}) as Record<string, unknown>;
    const protocolVersion = String(result['protocolVersion'] ?? revision);
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
    return { sessionId, protocolVersion, result };
  }

  function session(
    key: string,
    url: string,
    headers: Record<string, string>,
    revision: string,
    capabilities: Record<string, unknown>,
  ) {
    const entry = sessions.get(key);
    if (entry) {
      sessions.delete(key);
      sessions.set(key, entry);
      return entry.ready;
    }
    const created: PooledSession = { url, headers, ready: open(url, headers, revision, capabilities) };
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

  /** The session `call` goes through (opened if need be), and its key. */
  function sessionFor(call: PooledCall, revision: string) {
    const capabilities = call.clientCapabilities ?? NO_CAPABILITIES;
    const key = sessionKey(call.url, call.headers, revision, capabilities);
    return { key, ready: session(key, call.url, stripCallHeaders(call.headers), revision, capabilities) };
  }

  async function attempt(call: PooledCall, revision: string, retry: boolean) {
    const { key, ready } = sessionFor(call, revision);
    const s = await ready;
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
            onRequest: (r) => {
              const headers = sessionHeaders(stripCallHeaders(call.headers), s.sessionId, s.protocolVersion);
              const deferred = r.method === 'ping' ? undefined : call.onServerRequest?.(r);
              if (deferred === undefined) return answer(call.url, headers, r, call.refusal);
              void deferred.then(
                (reply) => post(call.url, headers, { jsonrpc: '2.0', id: r.id, ...reply }),
                () => answer(call.url, headers, r, call.refusal),
              );
            },
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
        if (sessions.get(key)?.ready === ready) sessions.delete(key);
        return attempt(call, revision, false);
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
   * Answers a request the upstream sent its client, at once: Plaza's pooled session is shared by
   * every agent, so it answers ping and refuses the rest (-32601) rather than leave the upstream
   * waiting for its own timeout (see docs/decisions/gateway.md, "/mcp answers an upstream's
   * requests itself").
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
    /** Sends one request through the pooled session for `revision` (opened with initialize if need be). */
    request: (call: PooledCall, revision: string) => attempt(call, revision, true),
    /** What initialize agreed with the upstream for `call` (opening the session if need be). */
    opened: (call: PooledCall, revision: string) => sessionFor(call, revision).ready,
    /** Forgets every pooled session. */
    clear: () => sessions.clear(),
    /** How many sessions are held. */
    size: () => sessions.size,
  };
}

/**
 * Sessions are shared per upstream URL and third-party credential (upstreams may bind them), and
 * per revision and declared client capabilities (what initialize said for every call in it).
 */
function sessionKey(
  url: string,
  headers: Record<string, string>,
  revision: string,
  capabilities: Record<string, unknown>,
): string {
  const credential = headers['authorization'];
  let key = credential ? `${url}\n${hash('sha256', credential, 'hex')}` : `${url}\n`;
  key += `\n${revision}`;
  if (capabilities !== NO_CAPABILITIES) {
    const declared = JSON.stringify(capabilities);
    if (declared !== '{}') key += `\n${hash('sha256', declared, 'hex')}`;
  }
  return key;
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
    if (
      name.startsWith('x-platform-') ||
      name === 'mcp-protocol-version' ||
      name === 'mcp-method' ||
      name === 'mcp-name'
    )
      continue;
    out[name] = value;
  }
  return out;
}
