/**
 * A provider's requests to its client during a `/mcp` call of a 2025 client in a session (see
 * client-session): asked of the client on the call's event stream, as the passthrough's revision
 * bridge asks them — a 2025 provider's as they come (the pool's onServerRequest), a 2026-07-28
 * provider's `input_required` rounds one by one (input-rounds), the call resent with the answers.
 */
import { askForInput, fulfilInput, INPUT_CAPABILITY, isInputRequired } from '../bridge/input-rounds.ts';
import type { JsonRpcResponse } from '../internal/json-rpc.ts';
import type { PooledCall } from '../upstream/pooled-call.ts';

/** What a call can ask its client. */
export interface ClientAsks {
  /** The client's declared capabilities (its initialize, carried by its session). */
  capabilities: Record<string, unknown>;
  /** Asks the client `method` on the call's stream; its answer, or undefined when none came. */
  ask(method: string, params: unknown): Promise<unknown>;
}

/** Whether the client declared a capability a provider's request to it needs (else there is nothing to ask it). */
export function asksAnything(capabilities: Record<string, unknown>): boolean {
  return Object.values(INPUT_CAPABILITY).some((needed) => capabilities[needed] !== undefined);
}

/**
 * The pool's hook for a 2025 provider's requests during the call: each the client declared the
 * capability for is asked of it; any other is left to the call's refusal.
 */
export function serverRequestsTo(asks: ClientAsks): NonNullable<PooledCall['onServerRequest']> {
  return (request) => {
    const needed = INPUT_CAPABILITY[request.method];
    if (needed === undefined || asks.capabilities[needed] === undefined) return undefined;
    return askForInput(asks, request).then((answer) =>
      'result' in answer
        ? { result: answer.result }
        : { error: { code: -32603, message: `Plaza could not ask the client: ${answer.refused}.` } },
    );
  };
}

/**
 * `first`, or — when a 2026-07-28 provider asks for input — its answer once the client gave it,
 * the call resent with `resend` each round, or why it could not be had.
 */
export async function withClientInput(
  asks: ClientAsks,
  first: JsonRpcResponse,
  resend: (inputResponses: Record<string, unknown>, requestState: unknown) => Promise<JsonRpcResponse>,
): Promise<JsonRpcResponse | { refused: string }> {
  if (!isInputRequired(first)) return first;
  return fulfilInput(first, { capabilities: asks.capabilities, ask: (m, p) => asks.ask(m, p), resend });
}
