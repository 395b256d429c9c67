/**
 * Upstream MCP sessions (the revisions before 2026-07-28) shared by all agents' calls to a
 * connector: one `initialize` per upstream URL, credential, revision and declared client
 * capabilities, reused until the upstream forgets it (HTTP 404), then re-initialised transparently
 * and the call retried once. Sessions are per instance; Plaza's own session ids never depend on them.
 */
import { hash, randomUUID } from 'node:crypto';

import { requestUpstream, SessionExpiredError } from '../upstream-client.ts';
import type { UpstreamHttp } from '../upstream-http.ts';
import { withDeadline } from './deadline.ts';
import type { PooledCall } from './pooled-call.ts';
import { createSessionMessages, sessionHeaders, stripCallHeaders } from './session-messages.ts';
import { createSessionOpener, type OpenedSession } from './session-open.ts';

export { type OpenedSession, RevisionRefusedError } from './session-open.ts';

/** What the session pool needs of the pool's options, resolved. */
export interface SessionPoolOptions {
  http: UpstreamHttp;
  timeoutMs: number;
  maxBytes: number;
  clientInfo: { name: string; version: string };
  maxSessions: number;
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

  const { cancel, answer, post } = createSessionMessages({ http, timeoutMs });
  const open = createSessionOpener({ http, timeoutMs, maxBytes, clientInfo, answer });

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
