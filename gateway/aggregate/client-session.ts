/**
 * The session `/mcp` gives a 2025 client at its `initialize`: a sealed id (Mcp-Session-Id) that
 * carries what the client declared (its capabilities and clientInfo, see bridge-session), sealed
 * with the gateway's session sealer as the passthrough's revision bridge seals its own. Nothing is
 * stored: any instance opens it. A request in the session has the client's capabilities, so a
 * provider's sampling, elicitation and roots requests during a call are asked of the client on the
 * call's event stream (see client-asks); one without a session declares none.
 */
import type { IncomingMessage } from 'node:http';

import {
  type BridgeSession,
  bridgeSessionId,
  bridgeSessionOf,
  isBridgeSession,
  openBridgeSession,
} from '../bridge/bridge-session.ts';
import type { SessionSealer } from '../session-sealer.ts';

/** The provider a `/mcp` session is sealed for (no provider slug holds a slash). */
export const AGGREGATE_SESSION = '/mcp';

/** A request's session: none, the one its id names, or `unknown` (the id does not open for this agent: 404). */
export type ClientSession = BridgeSession | 'unknown' | undefined;

/** The session a request's Mcp-Session-Id names for `agentId` (see ClientSession). */
export async function clientSessionOf(
  req: IncomingMessage,
  agentId: string,
  sealer: (() => Promise<SessionSealer>) | undefined,
): Promise<ClientSession> {
  const id = req.headers['mcp-session-id'];
  // An empty header names no session.
  if (id === undefined || id === '') return undefined;
  if (typeof id !== 'string' || !sealer) return 'unknown';
  const claims = (await sealer()).open(id);
  if (
    claims?.provider !== AGGREGATE_SESSION ||
    claims.agentId !== agentId ||
    !isBridgeSession(claims.upstreamSessionId)
  )
    return 'unknown';
  return openBridgeSession(claims.upstreamSessionId);
}

/** The sealed session id answering a 2025 client's `initialize` with `params`, for `agentId`. */
export async function sealedClientSession(
  sealer: () => Promise<SessionSealer>,
  agentId: string,
  params: Record<string, unknown> | undefined,
): Promise<string> {
  return (await sealer()).seal({
    provider: AGGREGATE_SESSION,
    agentId,
    upstreamSessionId: bridgeSessionId(bridgeSessionOf(params)),
  });
}

/** The params of a 2025 `initialize` request, when `body` is one. */
export function initializeParams(body: unknown): Record<string, unknown> | undefined {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return undefined;
  const { method, id, params } = body as { method?: unknown; id?: unknown; params?: unknown };
  if (method !== 'initialize' || id === undefined) return undefined;
  return typeof params === 'object' && params !== null && !Array.isArray(params)
    ? (params as Record<string, unknown>)
    : {};
}

/** The JSON-RPC responses `body` is made of (a client's answers to requests Plaza sent it), or undefined. */
export function clientResponses(body: unknown): { id: unknown }[] | undefined {
  const messages = Array.isArray(body) ? body : [body];
  const isResponse = (m: unknown) =>
    typeof m === 'object' &&
    m !== null &&
    (m as { method?: unknown }).method === undefined &&
    (m as { id?: unknown }).id !== undefined &&
    ('result' in m || 'error' in m);
  return messages.length > 0 && messages.every(isResponse) ? (messages as { id: unknown }[]) : undefined;
}
