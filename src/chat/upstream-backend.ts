import { type Clock, randomToken, UpstreamError } from '../kernel/index.ts';
import { countPromptTokens, countTokens, TokenCounter } from './tokenizer.ts';
import type { BackendCall, ChatBackend, CompletionStream, Usage } from './types.ts';
import { createUpstreamHttp } from './upstream-http.ts';

/** Options of {@link createUpstreamBackend}. */
export interface UpstreamOptions {
  /** Base URL including `/v1` when the server wants it, e.g. `https://api.openai.com/v1`. */
  baseUrl: string;
  apiKey: string | undefined;
  /** Time to connect and to a stream's headers, and the longest silence between two stream chunks. */
  timeoutMs: number;
  /**
   * The longest wait for a non-streamed answer (an upstream sends its headers only with the
   * finished completion, which may take minutes), and the longest a stream may last. Default
   * 600000 (the openai SDK's own timeout).
   */
  completionTimeoutMs?: number;
  /** Extra attempts on connection errors and 5xx, only before the first byte. */
  maxRetries: number;
  /** Reads an upstream's `Retry-After` given as a date. Default the system clock. */
  clock?: Clock;
}

/**
 * An OpenAI-compatible upstream (OpenAI, vLLM, Ollama, llama.cpp server). Streams pass through
 * event by event, unbuffered; usage is asked for and taken from the upstream, with the local
 * approximation only when it reports none.
 */
export function createUpstreamBackend(options: UpstreamOptions): ChatBackend {
  const endpoint = `${options.baseUrl.replace(/\/+$/, '')}/chat/completions`;
  if (!URL.canParse(endpoint)) throw new Error(`Invalid LLM_BASE_URL ${options.baseUrl}`);
  const post = createUpstreamHttp({
    endpoint,
    apiKey: options.apiKey,
    timeoutMs: options.timeoutMs,
    completionTimeoutMs: options.completionTimeoutMs ?? 600_000,
    maxRetries: options.maxRetries,
    clock: options.clock,
  });

  return {
    async complete(call) {
      const exchange = await post(JSON.stringify(upstreamBody(call, false)), 'json', call.signal);
      let body: Record<string, unknown>;
      try {
        body = JSON.parse(await exchange.text()) as Record<string, unknown>;
      } catch (error) {
        if (call.signal.aborted) throw new UpstreamError('The client went away.', { cause: error });
        if (exchange.timedOut()) throw new UpstreamError('The model backend timed out.', { cause: error });
        throw new UpstreamError('The model backend sent an unreadable answer.', { cause: error });
      } finally {
        exchange.release();
      }
      if (body === null || typeof body !== 'object' || !Array.isArray(body['choices']))
        throw new UpstreamError('The model backend sent an answer without choices.');
      const reported = usageOf(body['usage']);
      const usage = reported ?? approximate(call, countTokens(choicesText(body['choices'], 'message')));
      // request_id is Plaza's to give (the response's id for support); an upstream's is dropped.
      const { request_id: _upstreamRequestId, ...rest } = body;
      return { body: { ...rest, usage: reported ? clientUsage(body['usage'], reported) : usage }, usage };
    },

    async stream(call): Promise<CompletionStream> {
      const exchange = await post(JSON.stringify(upstreamBody(call, true)), 'sse', call.signal);
      const wantsUsage = call.request.stream_options?.include_usage === true;
      const content = new CompletionText();
      let usage: Usage | undefined;
      /** The upstream's believable usage as it sent it, for its details (cached, reasoning tokens). */
      let reportedUsage: unknown;
      let finished = false;
      let last: string | undefined;
      /** The upstream's usage-only chunk, held back: the client's one usage chunk is sent at the end. */
      let usageOnly: Record<string, unknown> | undefined;
      let sawFinish = false;

      /**
       * The end of a finished answer, after `out` (what the batch carried before it): for a
       * client that asked for usage, one usage-only chunk as OpenAI sends it, whatever chunks the
       * upstream put its usage in; from an upstream that reports none (servers that ignore
       * stream_options) or none believable, the approximation Plaza charges.
       */
      function done(out: string[]): string[] {
        finished = true;
        if (wantsUsage) {
          usage ??= approximate(call, content.tokens());
          out.push(
            usageChunk(
              usageOnly,
              last,
              call.backendModel,
              reportedUsage === undefined ? usage : clientUsage(reportedUsage, usage),
            ),
          );
        }
        out.push('[DONE]');
        return out;
      }

      /**
       * Takes one batch of the upstream's events, in place: what passes on is kept in it. Returns
       * the failure a chunk ended the stream with (the chunks before it still pass), if any.
       */
      function take(batch: string[]): UpstreamError | undefined {
        let kept = 0;
        for (const data of batch) {
          if (data === '[DONE]') {
            batch.length = kept;
            done(batch);
            return undefined;
          }
          last = data;
          sawFinish ||= FINISHED.test(data);
          // Only chunks that may carry usage or an error are parsed; the others (all but the
          // last one or two) are checked for their JSON object shape and passed on as they are.
          if (!USAGE_OR_ERROR.test(data)) {
            if (data.charCodeAt(0) !== 123 || data.charCodeAt(data.length - 1) !== 125) {
              batch.length = kept;
              return new UpstreamError('The model backend sent a malformed stream chunk.');
            }
            content.add(data);
            batch[kept++] = data;
            continue;
          }
          let chunk: { choices?: unknown[]; usage?: unknown; error?: unknown };
          try {
            chunk = JSON.parse(data) as typeof chunk;
          } catch (error) {
            batch.length = kept;
            return new UpstreamError('The model backend sent a malformed stream chunk.', { cause: error });
          }
          if (chunk === null || typeof chunk !== 'object' || Array.isArray(chunk)) {
            batch.length = kept;
            return new UpstreamError('The model backend sent a malformed stream chunk.');
          }
          if (chunk.error !== undefined && chunk.error !== null) {
            batch.length = kept;
            return new UpstreamError('The model backend failed during the stream.');
          }
          const reported = usageOf(chunk.usage);
          if (reported) {
            usage = reported;
            reportedUsage = chunk.usage;
          }
          content.add(data);
          if (chunk.usage === undefined || (wantsUsage && chunk.usage === null)) {
            batch[kept++] = data;
            continue;
          }
          // Plaza always asks for usage; the client gets it as OpenAI sends it: in one chunk
          // with no choices at the end when it asked (chunks of choices say `usage: null`),
          // nowhere when it did not. An upstream's usage on a choice chunk (llama.cpp, vLLM's
          // continuous_usage_stats) or in a chunk of its own would duplicate or leak it.
          if (!Array.isArray(chunk.choices) || chunk.choices.length === 0) {
            if (chunk.usage !== null) {
              usageOnly = chunk as Record<string, unknown>;
              continue;
            }
          }
          if (
            chunk.usage === null &&
            data.endsWith(NULL_USAGE_END) &&
            data.indexOf('"usage"') === data.length - NULL_USAGE_END.length + 1
          ) {
            // OpenAI's own form, on every chunk Plaza relays: cut, not serialised again.
            batch[kept++] = `${data.slice(0, -NULL_USAGE_END.length)}}`;
            continue;
          }
          const { usage: _usage, ...rest } = chunk;
          batch[kept++] = JSON.stringify(wantsUsage ? { ...rest, usage: null } : rest);
        }
        batch.length = kept;
        return undefined;
      }

      return {
        usage: () => usage,
        start(sink) {
          let over = false;
          let sinkEnded = false;
          const brokenOff = (error: unknown) =>
            error === undefined || error instanceof UpstreamError
              ? error
              : new UpstreamError(
                  exchange.timedOut() && !call.signal.aborted
                    ? 'The model backend timed out.'
                    : 'The model backend stream broke off.',
                  { cause: error },
                );
          /** Ends the exchange and the sink, once: the connection is kept after a finished answer, cut otherwise. */
          const close = (error?: unknown) => {
            if (over) return;
            over = true;
            exchange.release();
            // Upstream usage is the truth; without it (or for a broken-off stream, which is still
            // charged) the text the client received is approximated.
            usage ??= approximate(call, content.tokens());
            if (finished) exchange.drain();
            else exchange.destroy();
            sinkEnded = true;
            sink.end(brokenOff(error));
          };
          /** One read of the upstream, or its end (`batch` undefined), passed on to the sink. */
          const relay = (batch: string[] | undefined, error: Error | undefined) => {
            if (over) return;
            if (batch === undefined) {
              if (error !== undefined) return close(error);
              // Some servers (ik_llama.cpp, older llama.cpp builds) end a finished answer without [DONE].
              if (!sawFinish) return close(new UpstreamError('The model backend ended the stream early.'));
              sink.events(done([]));
              return close();
            }
            const failure = take(batch);
            if (batch.length > 0) sink.events(batch);
            if (failure) close(failure);
            else if (finished) close();
          };
          exchange.push((batch, error) => {
            // Runs in undici's callbacks (data, end, error) and the stream timer: whatever throws,
            // ending the stream included, ends it as broken off (the sink logs it and tells the
            // client in an error event) instead of escaping into them.
            try {
              relay(batch, error);
            } catch (thrown) {
              if (!over) return close(thrown);
              // Thrown while closing: the upstream is cut, and the sink hears the end unless it
              // already has (a throw from its own end is dropped by the exchange).
              exchange.destroy();
              if (sinkEnded) return;
              sinkEnded = true;
              sink.end(brokenOff(thrown));
            }
          });
          return { pause: () => exchange.pause(), resume: () => exchange.resume() };
        },
      };
    },
  };
}

/**
 * The completion tokens of a stream, needed only when the upstream reports no usage: the chunks are
 * kept as received and parsed at the end, or counted as they pile up (long answers), so a long
 * stream holds a count, never its whole text.
 */
class CompletionText {
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

/** The client's request as it came (top-level nulls left out), for the upstream model, asking for usage when streaming. */
function upstreamBody(call: BackendCall, stream: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(call.request.body))
    if (value !== undefined && value !== null) out[key] = value;
  out['model'] = call.backendModel;
  out['stream'] = stream;
  if (stream)
    out['stream_options'] = { ...(out['stream_options'] as Record<string, unknown> | undefined), include_usage: true };
  else delete out['stream_options'];
  return out;
}

/** How a chunk with `usage: null` last ends as OpenAI (and the JSON of most servers) writes it. */
const NULL_USAGE_END = ',"usage":null}';

/** A chunk that may carry usage or an error (one regex: ~3× faster than two `includes` here). */
const USAGE_OR_ERROR = /"(?:usage|error)"/;

/** A chunk whose choice has finished (`finish_reason` set, not null). */
const FINISHED = /"finish_reason":\s*"/;

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
function usageOf(value: unknown): Usage | undefined {
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
function choicesText(choices: unknown, field: 'message' | 'delta'): string {
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
function clientUsage(reported: unknown, usage: Usage): Record<string, unknown> {
  return { ...(reported as Record<string, unknown>), ...usage };
}

/**
 * The usage-only chunk (`choices: []`) a client that asked for usage gets: the upstream's own
 * (`upstream`, its other fields kept) with Plaza's figures, or one under the id, time and model of
 * the stream's `last` chunk.
 */
function usageChunk(
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

function approximate(call: BackendCall, tokens: number): Usage {
  const prompt = countPromptTokens(call.request.messages);
  return { prompt_tokens: prompt, completion_tokens: tokens, total_tokens: prompt + tokens };
}
