/**
 * Usage of an upstream completion: what an upstream reported and whether to believe it, the
 * approximation Plaza charges when it reported none, and the usage a client is shown. Apart from
 * upstream-backend.ts so the answer and stream paths read without these rules in the way.
 */
import { randomToken } from '../kernel/index.ts';
import { countPromptTokens, TokenCounter } from './tokenizer.ts';
import type { BackendCall, Usage } from './types.ts';

/**
 * The completion tokens of a stream, needed only when the upstream reports no usage: the chunks are
 * kept as received and parsed at the end, or counted as they pile up (long answers), so a long
 * stream holds a count, never its whole text.
 */
export class CompletionText {
  #chunks: string[] = [];
  #size = 0;
  readonly #counter = new TokenCounter();

  add(data: string): void {
    this.#chunks.push(data);
    this.#size += data.length;
    if (this.#size > 256 * 1024) this.#fold();
  }

  tokens(): number {
    this.#fold();
    return this.#counter.total();
  }

  #fold(): void {
    for (const data of this.#chunks) {
      let choices: unknown;
      try {
        choices = (JSON.parse(data) as { choices?: unknown }).choices;
      } catch {
        // A malformed chunk carries no countable text (it ended the stream when it arrived).
        continue;
      }
      this.#counter.add(choicesText(choices, 'delta'));
    }
    this.#chunks = [];
    this.#size = 0;
  }
}

/** Most tokens one count may hold (the usage table's int columns). */
const MAX_TOKENS = 2_147_483_647;

const isCount = (value: unknown): value is number =>
  Number.isSafeInteger(value) && (value as number) >= 0 && (value as number) <= MAX_TOKENS;

/**
 * The upstream's usage when it is believable: whole counts from 0 to 2^31-1, and a total no
 * smaller than prompt + completion (a total that is smaller, or missing, becomes their sum).
 * Anything else is no usage (the text is approximated instead): a negative total escaped the
 * token budgets, and an out-of-range one failed the usage batch it was in.
 */
export function usageOf(value: unknown): Usage | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  const u = value as Record<string, unknown>;
  const prompt = u['prompt_tokens'];
  const completion = u['completion_tokens'];
  if (!isCount(prompt) || !isCount(completion) || prompt + completion > MAX_TOKENS) return undefined;
  const reported = u['total_tokens'];
  const total = isCount(reported) && reported >= prompt + completion ? reported : prompt + completion;
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: total };
}

/** The generated text of every choice: content, and the names and arguments of tool calls. */
export function choicesText(choices: unknown, field: 'message' | 'delta'): string {
  if (!Array.isArray(choices)) return '';
  let text = '';
  for (const choice of choices as Record<string, { content?: unknown; tool_calls?: unknown } | undefined>[]) {
    const message = choice?.[field];
    if (typeof message?.content === 'string') text += message.content;
    if (!Array.isArray(message?.tool_calls)) continue;
    for (const call of message.tool_calls as { function?: { name?: unknown; arguments?: unknown } }[]) {
      if (typeof call?.function?.name === 'string') text += ` ${call.function.name}`;
      if (typeof call?.function?.arguments === 'string') text += call.function.arguments;
    }
  }
  return text;
}

/**
 * The usage a client is shown: the upstream's own object, so its details (`prompt_tokens_details`
 * with cached tokens, `completion_tokens_details` with reasoning tokens, a gateway's `cost`) reach
 * it, with the counts Plaza took from it (a total below prompt + completion made their sum).
 */
export function clientUsage(reported: unknown, usage: Usage): Record<string, unknown> {
  return { ...(reported as Record<string, unknown>), ...usage };
}

/**
 * The usage-only chunk (`choices: []`) a client that asked for usage gets: the upstream's own
 * (`upstream`, its other fields kept) with Plaza's figures, or one under the id, time and model of
 * the stream's `last` chunk.
 */
export function usageChunk(
  upstream: Record<string, unknown> | undefined,
  last: string | undefined,
  model: string,
  usage: Usage | Record<string, unknown>,
): string {
  if (upstream) return JSON.stringify({ ...upstream, choices: [], usage });
  let chunk: Record<string, unknown> = {};
  try {
    chunk = JSON.parse(last ?? '{}') as Record<string, unknown>;
  } catch {
    // A chunk that was {…}-shaped but no JSON (passed on as it came): the defaults below.
  }
  const { id = `chatcmpl-${randomToken(12)}`, created = Math.floor(Date.now() / 1000) } = chunk;
  return JSON.stringify({
    id,
    object: 'chat.completion.chunk',
    created,
    model: chunk['model'] ?? model,
    choices: [],
    usage,
  });
}

/** Plaza's approximation of a completion of `tokens` tokens: the prompt counted here, locally. */
export function approximate(call: BackendCall, tokens: number): Usage {
  const prompt = countPromptTokens(call.request.messages);
  return { prompt_tokens: prompt, completion_tokens: tokens, total_tokens: prompt + tokens };
}
