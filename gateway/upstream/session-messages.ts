/**
 * The pooled sessions' best-effort messages to an upstream (its requests answered, a cancelled
 * request told, any message POSTed with the answer ignored) and the headers they carry: apart
 * from the pool, which only keeps sessions and sends calls through them.
 */
import { RPC_ERRORS } from '../internal/json-rpc.ts';
import type { UpstreamServerRequest } from '../upstream-client.ts';
import type { UpstreamHttp } from '../upstream-http.ts';
import { withDeadline } from './deadline.ts';

/** What the session messages need of the pool's options. */
export interface SessionMessageDeps {
  http: UpstreamHttp;
  timeoutMs: number;
}

/** Builds the session messages; see the file's comment. */
export function createSessionMessages(deps: SessionMessageDeps) {
  const { http, timeoutMs } = deps;

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

  return { cancel, answer, post };
}

/** The messages a pooled session sends on its own (see createSessionMessages). */
export type SessionMessages = ReturnType<typeof createSessionMessages>;

/** `headers` with the session's id (when the upstream gave one) and protocol version. */
export function sessionHeaders(
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
export function stripCallHeaders(headers: Record<string, string>): Record<string, string> {
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
