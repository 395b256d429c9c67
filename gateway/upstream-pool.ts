import { randomUUID } from 'node:crypto';

import type { JsonRpcResponse } from './internal/json-rpc.ts';
import { withDeadline } from './upstream/deadline.ts';
import { refusesRevision, supportedRevisions } from './upstream/error-answer.ts';
import type { PooledCall } from './upstream/pooled-call.ts';
import { STATELESS_REVISION, upstreamMode } from './upstream/revisions.ts';
import { createSessionPool, type OpenedSession, RevisionRefusedError } from './upstream/sessions.ts';
import { PLAZA_CLIENT_INFO, statelessRequest } from './upstream/stateless.ts';
import { requestUpstream } from './upstream-client.ts';
import { createUpstreamHttp, type UpstreamHttp } from './upstream-http.ts';

export type { PooledCall } from './upstream/pooled-call.ts';
export type { OpenedSession } from './upstream/sessions.ts';

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

/**
 * How the gateway sends requests to upstreams, in the revision each speaks (see PooledCall's
 * `revisions`): stateless requests to a 2026-07-28 upstream (no initialize, no session; the
 * envelope in `_meta`, the standard headers), pooled sessions to the earlier ones (see
 * upstream/sessions.ts). The answer comes back as the upstream gave it (a 2026-07-28 result with
 * its `resultType`, `input_required` included): the caller decides what to do with it.
 */
export function createUpstreamPool(options: UpstreamPoolOptions = {}) {
  const http = options.http ?? createUpstreamHttp();
  const timeoutMs = options.timeoutMs ?? 60_000;
  const maxBytes = options.maxResponseBytes ?? 16 * 1024 * 1024;
  const clientInfo = options.clientInfo ?? PLAZA_CLIENT_INFO;
  const maxSessions = options.maxSessions ?? 1000;
  if (!(Number.isInteger(maxSessions) && maxSessions >= 1))
    throw new TypeError('maxSessions must be a whole number >= 1');
  const sessions = createSessionPool({ http, timeoutMs, maxBytes, clientInfo, maxSessions });
  // Upstreams with no recorded revisions that refused initialize as an unsupported version, by
  // URL: spoken to stateless from then on (bounded like the sessions).
  const refusedSessions = new Set<string>();

  async function stateless(call: PooledCall, revision: string): Promise<JsonRpcResponse> {
    const { params, headers } = statelessRequest({
      revision,
      method: call.method,
      params: call.params,
      headers: call.headers,
      clientInfo,
      clientCapabilities: call.clientCapabilities,
      toolInputSchema: call.toolInputSchema,
    });
    const message = { jsonrpc: '2.0' as const, id: randomUUID(), method: call.method, params };
    // No session names the request to the upstream: closing the stream is the cancellation
    // (2026-07-28, Streamable HTTP), which the deadline's abort does.
    const { response } = await withDeadline(timeoutMs, call.signal, (signal) =>
      requestUpstream(http, {
        url: call.url,
        message,
        headers,
        signal,
        onNotification: call.onNotification,
        maxBytes,
        onBytes: call.onBytes,
        errorAnswers: true,
      }),
    );
    return response;
  }

  /** Through a pooled session; stateless instead when the upstream refuses initialize for its version and offers 2026-07-28. */
  async function session(call: PooledCall, revision: string, recorded: boolean): Promise<JsonRpcResponse> {
    try {
      return await sessions.request(call, revision);
    } catch (error) {
      if (!(error instanceof RevisionRefusedError)) throw error;
      if (!recorded || error.supported.includes(STATELESS_REVISION)) {
        if (refusedSessions.size >= maxSessions) refusedSessions.clear();
        refusedSessions.add(call.url);
        return stateless(call, STATELESS_REVISION);
      }
      throw error;
    }
  }

  async function request(call: PooledCall): Promise<JsonRpcResponse> {
    const mode = upstreamMode(call.revisions);
    if (mode.stateless) {
      const response = await stateless(call, mode.revision);
      // Recorded as 2026-07-28 but no longer speaking it (a -32022 naming only earlier revisions): a session.
      if (refusesRevision(response) && !supportedRevisions(response).includes(mode.revision)) {
        const legacy = upstreamMode(supportedRevisions(response));
        if (!legacy.stateless) return session(call, legacy.revision, false);
      }
      return response;
    }
    if (!mode.recorded && refusedSessions.has(call.url)) return stateless(call, STATELESS_REVISION);
    return session(call, mode.revision, mode.recorded);
  }

  return {
    /** Sends one request to the upstream in the revision it speaks (see PooledCall's `revisions`). */
    request,
    /**
     * What the upstream's initialize said for `call`'s session (revisions before 2026-07-28): its
     * capabilities, serverInfo and agreed version; the session is opened if need be.
     */
    initialized: (call: PooledCall): Promise<OpenedSession> => {
      const mode = upstreamMode(call.revisions);
      return sessions.opened(call, mode.revision);
    },
    /** Forgets every pooled session. */
    clear: () => {
      sessions.clear();
      refusedSessions.clear();
    },
    /** How many sessions are held (tests). */
    size: () => sessions.size(),
  };
}

/** A pool of upstream sessions. */
export type UpstreamPool = ReturnType<typeof createUpstreamPool>;
