/**
 * A 2025 provider's requests to its client (sampling, elicitation, roots) during a 2026-07-28
 * client's request, as that client's revision has them: `input_required` rounds. The provider's
 * request waits in the pooled session on the instance that sent the call (A); the client gets an
 * `input_required` result naming it, with a `requestState` Plaza sealed (which call, which round);
 * the client's retry, on any instance (B), hands its `inputResponses` to A (see input-waiters: here
 * or through Redis), and waits for what A sees next — another request of the provider (another
 * round) or the call's answer, receipted and stamped on A. Waits are bounded by the gateway's
 * timeout: a client that never retries has the provider told so, and the call ends.
 */
import { randomUUID } from 'node:crypto';

import type { JsonRpcResponse } from '../internal/json-rpc.ts';
import type { SessionSealer } from '../session-sealer.ts';
import type { UpstreamServerRequest } from '../upstream-client.ts';
import type { InputWaiters } from './input-waiters.ts';

/** Marks a sealed requestState as a round of Plaza's (the sealer's upstream-session slot). */
const PREFIX = 'plaza-round1.';
/** Rounds one request may take. */
const MAX_ROUNDS = 8;

/** What a round's outcome is: the provider asks again, or the request is answered. */
export type RoundOutcome =
  { input: { inputRequests: Record<string, unknown>; requestState: string } } | { done: JsonRpcResponse };

/** A round a retry continues, from its sealed requestState. */
export interface HeldRound {
  id: string;
  round: number;
}

interface RoundDeps {
  waiters: InputWaiters;
  sealer: SessionSealer;
  timeoutMs: number;
}

const outcomeKey = (id: string, round: number) => JSON.stringify(['bridge-round-outcome', id, round]);
const answerKey = (id: string, round: number) => JSON.stringify(['bridge-round-answer', id, round]);

/**
 * The rounds of one request on the instance that sends it: `onServerRequest` for the pool, and
 * `first`, what the client's request gets (the first round, or the answer).
 */
export function holdRounds(deps: RoundDeps, owner: { provider: string; agentId: string }) {
  const id = randomUUID();
  let round = 0;
  const signal = new AbortController();
  const first = deps.waiters.wait(outcomeKey(id, 0), deps.timeoutMs, signal.signal) as Promise<
    RoundOutcome | undefined
  >;
  return {
    first,
    /** For the pool: the provider's request becomes a round; its answer is the client's, when it retries. */
    onServerRequest(
      request: UpstreamServerRequest,
    ): Promise<{ result: unknown } | { error: { code: number; message: string } }> | undefined {
      if (round >= MAX_ROUNDS) return undefined;
      const asked = round++;
      const key = `r${round}`;
      const answered = deps.waiters.wait(answerKey(id, round), deps.timeoutMs, signal.signal);
      const requestState = deps.sealer.seal({
        provider: owner.provider,
        agentId: owner.agentId,
        upstreamSessionId: `${PREFIX}${JSON.stringify([id, round])}`,
      });
      const outcome: RoundOutcome = {
        input: { inputRequests: { [key]: { method: request.method, params: request.params } }, requestState },
      };
      deps.waiters.answer(outcomeKey(id, asked), outcome);
      return answered.then((inputResponses) => {
        const reply = (inputResponses as Record<string, unknown> | undefined)?.[key];
        return reply === undefined
          ? { error: { code: -32603, message: `The client did not answer ${request.method.slice(0, 100)} in time.` } }
          : { result: reply };
      });
    },
    /** The request's answer (stamped, receipted): to the client's request or its latest retry. */
    done(response: JsonRpcResponse): void {
      deps.waiters.answer(outcomeKey(id, round), { done: response } satisfies RoundOutcome);
    },
  };
}

/** The round a retry's `requestState` continues, when Plaza sealed it for this agent and provider. */
export function openRound(
  sealer: SessionSealer,
  requestState: unknown,
  owner: { provider: string; agentId: string },
): HeldRound | undefined {
  if (typeof requestState !== 'string') return undefined;
  const claims = sealer.open(requestState);
  if (!claims || claims.provider !== owner.provider || claims.agentId !== owner.agentId) return undefined;
  if (!claims.upstreamSessionId.startsWith(PREFIX)) return undefined;
  try {
    const [id, round] = JSON.parse(claims.upstreamSessionId.slice(PREFIX.length)) as [string, number];
    return typeof id === 'string' && Number.isSafeInteger(round) ? { id, round } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Continues a round on whichever instance the retry reached: hands the client's answers to the
 * waiting provider request, and waits for what comes next (undefined: nothing in time).
 */
export async function continueRound(
  deps: RoundDeps,
  held: HeldRound,
  inputResponses: unknown,
  gone: AbortSignal,
): Promise<RoundOutcome | undefined> {
  // Waiting first: the outcome may come back at once, from another instance.
  const next = deps.waiters.wait(outcomeKey(held.id, held.round), deps.timeoutMs, gone) as Promise<
    RoundOutcome | undefined
  >;
  deps.waiters.answer(answerKey(held.id, held.round), inputResponses ?? {});
  return next;
}
