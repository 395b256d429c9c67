import { type Clock, UpstreamError } from '../kernel/index.ts';
import { countTokens } from './tokenizer.ts';
import type { BackendCall, ChatBackend, CompletionStream } from './types.ts';
import { UpstreamChunks } from './upstream-chunks.ts';
import { createUpstreamHttp } from './upstream-http.ts';
import { approximate, choicesText, clientUsage, usageOf } from './upstream-usage.ts';

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
      const chunks = new UpstreamChunks(call);

      return {
        usage: () => chunks.usage,
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
            chunks.settleUsage();
            if (chunks.finished) exchange.drain();
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
              if (!chunks.sawFinish) return close(new UpstreamError('The model backend ended the stream early.'));
              sink.events(chunks.done([]));
              return close();
            }
            const failure = chunks.take(batch);
            if (batch.length > 0) sink.events(batch);
            if (failure) close(failure);
            else if (chunks.finished) close();
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
