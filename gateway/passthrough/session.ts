/**
 * The passthrough's sessions: the id a client holds is the upstream's session id sealed with the
 * agent and provider (see session-sealer), opened on each request and sealed on each answer.
 */
import { GatewayError } from '../error-table.ts';
import type { SessionSealer } from '../session-sealer.ts';
import type { UpstreamHttpResponse } from '../upstream-http.ts';
import { type Exchange, SESSION_GONE } from './exchange.ts';

/** The upstream session a request's sealed `Mcp-Session-Id` names; throws `session_gone` for one not this agent's on this provider. */
export function openSession(
  sealer: SessionSealer,
  presented: string | string[] | undefined,
  provider: string,
  agentId: string,
): string | undefined {
  if (typeof presented !== 'string' || presented === '') return undefined;
  const claims = sealer.open(presented);
  if (!claims || claims.provider !== provider || claims.agentId !== agentId)
    throw new GatewayError('session_gone', SESSION_GONE);
  return claims.upstreamSessionId;
}

/** The headers of the upstream's answer the client gets: its session sealed, its protocol version. */
export function answerHeaders(
  sealer: SessionSealer,
  ex: Exchange,
  upstream: UpstreamHttpResponse,
): Record<string, string> {
  const headers: Record<string, string> = {};
  const session = upstream.header('mcp-session-id');
  if (session) {
    // The same upstream session the caller presented: its sealed id stands (no new seal per call).
    headers['mcp-session-id'] =
      session === ex.upstreamSession && typeof ex.presented === 'string'
        ? ex.presented
        : sealer.seal({ provider: ex.provider, agentId: ex.identity.agentId, upstreamSessionId: session });
  }
  const version = upstream.header('mcp-protocol-version');
  if (version) headers['mcp-protocol-version'] = version;
  return headers;
}
