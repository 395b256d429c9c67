import type { UpstreamNotification, UpstreamServerRequest } from '../upstream-client.ts';

/** One request sent to an upstream through the pool. */
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
  /**
   * Answers a request the upstream sends its client during this call (sessions only): the answer it
   * resolves to (`{ result }` or `{ error }`) is POSTed in the session. Returning undefined leaves
   * it to `refusal` (ping is answered, anything else refused at once).
   */
  onServerRequest?: (
    request: UpstreamServerRequest,
  ) => Promise<{ result: unknown } | { error: { code: number; message: string } }> | undefined;
  /** Told the size of the call's answer read so far (see UpstreamRequest.onBytes). */
  onBytes?: (size: number) => string | undefined;
  /**
   * The revisions the upstream offers (the connector's `protocolVersions`, newest first): with
   * 2026-07-28 among them the request goes stateless; with earlier ones only, through a pooled
   * session in the newest both speak; with none, as an unknown upstream (a session, stateless
   * once it refuses initialize as an unsupported version).
   */
  revisions?: readonly string[];
  /**
   * The client capabilities the request declares on the caller's behalf (default none): in a
   * stateless request's envelope, or in the initialize of the pooled session it goes through
   * (sessions are then also pooled by capabilities).
   */
  clientCapabilities?: Record<string, unknown>;
  /**
   * The called tool's input schema (a tools/call): to a 2026-07-28 upstream, each argument its
   * schema marks with `x-mcp-header` is mirrored in an `Mcp-Param-*` header, as the server checks.
   */
  toolInputSchema?: Record<string, unknown>;
}
