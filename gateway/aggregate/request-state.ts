/**
 * A 2026-07-28 provider's multi-round-trip state, carried by the agent: when a provider answers a
 * call `input_required`, the agent gets the provider's `requestState` sealed (AES-256-GCM, the
 * gateway's session key) with the provider and the agent's id, so any instance can continue the
 * round trip, and a state cannot be replayed by another agent or sent to another provider. Nothing
 * is kept by Plaza between the rounds.
 */
import type { SessionSealer } from '../session-sealer.ts';

/** Marks a sealed request state apart from a sealed session id (both are sealed the same way). */
const MARK = 'mrtr:';
/** Sealed states longer than this are not opened (the sealer's own bound on what it opens). */
export const MAX_SEALED_STATE = 4096;

/** The sealing of one agent's request states. */
export interface RequestStates {
  /** The state the agent is given for `provider`'s `state` (absent when the provider sent none). */
  seal(provider: string, state: string | undefined): Promise<string>;
  /** The provider and its state behind a sealed state of this agent's; undefined when it is not one. */
  open(sealed: string): Promise<{ provider: string; state?: string } | undefined>;
}

/** The request states of the agent `agentId`, sealed with `sealer`. */
export function requestStatesOf(sealer: () => Promise<SessionSealer>, agentId: string): RequestStates {
  return {
    async seal(provider, state) {
      const upstreamSessionId = `${MARK}${state === undefined ? '' : `=${state}`}`;
      return (await sealer()).seal({ provider, agentId, upstreamSessionId });
    },
    async open(sealed) {
      if (sealed.length > MAX_SEALED_STATE) return undefined;
      const claims = (await sealer()).open(sealed);
      if (!claims || claims.agentId !== agentId || !claims.upstreamSessionId.startsWith(MARK)) return undefined;
      const rest = claims.upstreamSessionId.slice(MARK.length);
      return { provider: claims.provider, ...(rest.startsWith('=') ? { state: rest.slice(1) } : {}) };
    },
  };
}

/** The client capability each kind of input request needs (MCP 2026-07-28). */
const CAPABILITY_OF: Record<string, string> = {
  'elicitation/create': 'elicitation',
  'sampling/createMessage': 'sampling',
  'roots/list': 'roots',
};

/** The capabilities an `input_required` result asks for that the client did not declare (empty: none). */
export function missingCapabilities(
  result: Record<string, unknown>,
  declared: Record<string, unknown> | undefined,
): string[] {
  const requests = result['inputRequests'];
  if (typeof requests !== 'object' || requests === null) return [];
  const missing = new Set<string>();
  for (const request of Object.values(requests as Record<string, { method?: unknown }>)) {
    const capability = CAPABILITY_OF[String(request?.method)];
    if (capability && declared?.[capability] === undefined) missing.add(capability);
  }
  return [...missing];
}
