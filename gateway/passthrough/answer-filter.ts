/** How the passthrough reads an upstream's answer before relaying it: whose it is, and what a refusal says. */
import { isResponse, type JsonRpcId, type JsonRpcResponse, parseJson } from '../internal/json-rpc.ts';
import { DROPPED } from './exchange.ts';

/**
 * `parsed` without the answers to requests it was not asked (ids outside `asked`): the same value
 * when there are none, a shorter batch, or DROPPED when nothing is left. Other messages stay.
 */
export function onlyAsked(parsed: unknown, asked: ReadonlySet<JsonRpcId>): unknown {
  // An error under id null answers no request in particular (the provider could not read it): it
  // stays, as does one with no id at all (the SDK's transport answers a GET without a session so).
  const unasked = (m: unknown) => isResponse(m) && m.id !== null && m.id !== undefined && !asked.has(m.id);
  if (!Array.isArray(parsed)) return unasked(parsed) ? DROPPED : parsed;
  if (!parsed.some(unasked)) return parsed;
  const kept = parsed.filter((m) => !unasked(m));
  return kept.length > 0 ? kept : DROPPED;
}

/** Why a provider's HTTP 401 failed a request, and where the caller's credential for it goes. */
export function credentialRefusal(provider: string, sent: boolean): string {
  return sent
    ? `the provider '${provider}' refused the credential sent as X-PLATFORM-Upstream-Authorization (HTTP 401)`
    : `the provider '${provider}' needs a credential of its own (HTTP 401): send it as X-PLATFORM-Upstream-Authorization (plaza mcp connect ${provider} --upstream-token-env NAME)`;
}

/** Whether an upstream's 400 answer says it does not know the session (its JSON-RPC error names one). */
export function forgotSession(text: string): boolean {
  const message = upstreamErrorMessage(text);
  return message !== undefined && /session/i.test(message) && !/version/i.test(message);
}

/** The message of the JSON-RPC error an upstream's refusal carries (e.g. "Bad Request: Server not initialized"), cut to 200 characters. */
export function upstreamErrorMessage(text: string): string | undefined {
  try {
    const message = (JSON.parse(text) as { error?: { message?: unknown } } | null)?.error?.message;
    return typeof message === 'string' && message !== '' ? message.slice(0, 200) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The JSON-RPC error an upstream's refusal (`text`) answers the request sent under `id` with, when
 * it is one: the transport refusals of MCP 2026-07-28 (-32020, -32021, -32022) name the request
 * they refuse, and reach the caller as the errors they are.
 */
export function errorAnswering(text: string, id: JsonRpcId): (JsonRpcResponse & { error: object }) | undefined {
  let parsed: unknown;
  try {
    parsed = parseJson(text);
  } catch {
    return undefined;
  }
  if (!isResponse(parsed) || parsed.id !== id) return undefined;
  const error = (parsed as { error?: unknown }).error as { code?: unknown; message?: unknown } | undefined;
  return error && Number.isSafeInteger(error.code) && typeof error.message === 'string'
    ? (parsed as JsonRpcResponse & { error: object })
    : undefined;
}
