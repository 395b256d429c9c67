/**
 * A 2026-07-28 provider's `input_required` answered by a client of an earlier revision: each
 * embedded request (elicitation, sampling, roots) goes to the client as a request on the call's
 * event stream, as its revision has a server ask; its answers go back to the provider as the
 * retried request's `inputResponses`, with the provider's `requestState` as it came. What a round
 * needs is in the retried request itself (the provider keeps its own state in `requestState`), so
 * only the wait for the client's answer is held, on the instance holding the client's stream.
 */
import type { JsonRpcResponse } from '../internal/json-rpc.ts';

/** Rounds of input a request may take before Plaza gives up on it. */
export const MAX_INPUT_ROUNDS = 8;
/** Requests one round may embed. */
const MAX_INPUT_REQUESTS = 16;
/** The client capability each embedded request needs (the requests Plaza asks a client for a provider). */
export const INPUT_CAPABILITY: Readonly<Record<string, string>> = {
  'elicitation/create': 'elicitation',
  'sampling/createMessage': 'sampling',
  'roots/list': 'roots',
};

/** What the rounds need of their request. */
export interface InputRounds {
  /** The client's declared capabilities (its initialize). */
  capabilities: Record<string, unknown>;
  /** Asks the client `method` and waits for its answer (undefined: none came, or it cannot be asked). */
  ask(method: string, params: unknown): Promise<unknown>;
  /** Sends the request again with the client's answers and the provider's state. */
  resend(inputResponses: Record<string, unknown>, requestState: unknown): Promise<JsonRpcResponse>;
}

/** The provider's answer once it needs no more input, or why the rounds ended without one. */
export async function fulfilInput(
  first: JsonRpcResponse,
  rounds: InputRounds,
): Promise<JsonRpcResponse | { refused: string }> {
  let response = first;
  for (let round = 0; isInputRequired(response); round++) {
    if (round >= MAX_INPUT_ROUNDS)
      return { refused: `the provider asked for input ${MAX_INPUT_ROUNDS} times; Plaza stopped there` };
    const result = response.result as { inputRequests?: unknown; requestState?: unknown };
    const asked =
      typeof result.inputRequests === 'object' && result.inputRequests !== null
        ? Object.entries(result.inputRequests as Record<string, { method?: unknown; params?: unknown }>)
        : [];
    if (asked.length > MAX_INPUT_REQUESTS)
      return { refused: `the provider asked for more than ${MAX_INPUT_REQUESTS} inputs at once` };
    const inputResponses: Record<string, unknown> = {};
    const answers = await Promise.all(asked.map(([, request]) => askForInput(rounds, request)));
    for (const [index, [key]] of asked.entries()) {
      const answer = answers[index]!;
      if ('refused' in answer) return answer;
      inputResponses[key] = answer.result;
    }
    response = await rounds.resend(inputResponses, result.requestState);
  }
  return response;
}

/** Whether a response is a result asking for the client's input. */
export function isInputRequired(response: JsonRpcResponse): boolean {
  return (response.result as { resultType?: unknown } | undefined)?.resultType === 'input_required';
}

/**
 * Asks the client one request a provider embedded in its `input_required` result, or sent it during
 * a call (a 2025 provider): its answer's result, or why there is none (a method Plaza does not pass
 * on, a capability the client did not declare, no answer, a refusal).
 */
export async function askForInput(
  rounds: Pick<InputRounds, 'capabilities' | 'ask'>,
  request: { method?: unknown; params?: unknown },
): Promise<{ result: unknown } | { refused: string }> {
  const method = typeof request?.method === 'string' ? request.method : '';
  const needs = INPUT_CAPABILITY[method];
  if (needs === undefined)
    return {
      refused: `the provider asked its client for ${JSON.stringify(method.slice(0, 60))}, which Plaza does not pass on`,
    };
  if (rounds.capabilities[needs] === undefined)
    return { refused: `the provider asked for ${method}, which the client did not declare (capability "${needs}")` };
  const answer = (await rounds.ask(method, request.params)) as
    { result?: unknown; error?: { message?: unknown } } | undefined;
  if (answer === undefined) return { refused: `the client did not answer the provider's ${method}` };
  if (answer.error !== undefined || answer.result === undefined)
    return {
      refused: `the client refused the provider's ${method}: ${String(answer.error?.message ?? 'no result').slice(0, 200)}`,
    };
  return { result: answer.result };
}
