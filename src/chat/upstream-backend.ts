import { RateLimitError, UpstreamError, ValidationError } from '../kernel/index.ts';
import { readSseData } from './sse.ts';
import { countPromptTokens, countTokens } from './tokenizer.ts';
import type { BackendCall, ChatBackend, CompletionStream, Usage } from './types.ts';

/** Options of {@link createUpstreamBackend}. */
export interface UpstreamOptions {
  /** Base URL including `/v1` when the server wants it, e.g. `https://api.openai.com/v1`. */
  baseUrl: string;
  apiKey: string | undefined;
  /** Time to the response headers, and the longest silence between two stream chunks. */
  timeoutMs: number;
  /** Extra attempts on connection errors and 5xx, only before the first byte. */
  maxRetries: number;
  /** Injected for tests; defaults to the global (undici) fetch. */
  fetch?: typeof fetch;
}

const RETRYABLE = new Set([500, 502, 503, 504]);

/**
 * An OpenAI-compatible upstream (OpenAI, vLLM, Ollama, llama.cpp server). Streams pass through
 * event by event, unbuffered; usage is asked for and taken from the upstream, with the local
 * approximation only when it reports none.
 */
export function createUpstreamBackend(options: UpstreamOptions): ChatBackend {
  const endpoint = `${options.baseUrl.replace(/\/+$/, '')}/chat/completions`;
  if (!URL.canParse(endpoint)) throw new Error(`Invalid LLM_BASE_URL ${options.baseUrl}`);
  const doFetch = options.fetch ?? fetch;

  /** POSTs the request, retrying before the first byte; resolves with an OK response and its abort handle. */
  async function send(
    call: BackendCall,
    stream: boolean,
  ): Promise<{ response: Response; controller: AbortController; idle: () => void; pause: () => void; done: () => void }> {
    const body = JSON.stringify(upstreamBody(call, stream));
    let lastError: unknown;
    for (let attempt = 0; attempt <= options.maxRetries; attempt++) {
      if (attempt > 0) await sleep(Math.min(2_000, 200 * 2 ** (attempt - 1)), call.signal);
      if (call.signal.aborted) throw new UpstreamError('The client went away.');
      const controller = new AbortController();
      const onClientAbort = () => controller.abort(new Error('client went away'));
      call.signal.addEventListener('abort', onClientAbort, { once: true });
      let timer = setTimeout(() => controller.abort(new Error('upstream timeout')), options.timeoutMs);
      const idle = () => {
        clearTimeout(timer);
        timer = setTimeout(() => controller.abort(new Error('upstream went silent')), options.timeoutMs);
      };
      const pause = () => clearTimeout(timer);
      const done = () => {
        clearTimeout(timer);
        call.signal.removeEventListener('abort', onClientAbort);
      };
      try {
        const headers: Record<string, string> = { 'content-type': 'application/json', accept: stream ? 'text/event-stream' : 'application/json' };
        if (options.apiKey) headers['authorization'] = `Bearer ${options.apiKey}`;
        const response = await doFetch(endpoint, { method: 'POST', headers, body, signal: controller.signal });
        if (response.ok) {
          idle();
          return { response, controller, idle, pause, done };
        }
        await response.body?.cancel().catch(() => undefined);
        done();
        lastError = statusError(response);
        if (!RETRYABLE.has(response.status)) throw lastError;
      } catch (error) {
        done();
        if (error === lastError) throw error;
        if (call.signal.aborted) throw new UpstreamError('The client went away.', { cause: error });
        lastError = new UpstreamError(controller.signal.aborted ? 'The model backend timed out.' : 'The model backend could not be reached.', { cause: error });
      }
    }
    throw lastError;
  }

  return {
    async complete(call) {
      const { response, done } = await send(call, false);
      let body: Record<string, unknown>;
      try {
        body = (await response.json()) as Record<string, unknown>;
      } catch (error) {
        throw new UpstreamError('The model backend sent an unreadable answer.', { cause: error });
      } finally {
        done();
      }
      if (body === null || typeof body !== 'object' || !Array.isArray(body['choices'])) throw new UpstreamError('The model backend sent an answer without choices.');
      const usage = usageOf(body['usage']) ?? approximate(call, contentOf(body['choices']));
      return { body: { ...body, usage }, usage };
    },

    async stream(call): Promise<CompletionStream> {
      const { response, controller, idle, pause, done } = await send(call, true);
      if (!response.body) {
        done();
        throw new UpstreamError('The model backend sent no stream.');
      }
      const wantsUsage = call.request.stream_options?.include_usage === true;
      let usage: Usage | undefined;
      let content = '';
      async function* events(): AsyncGenerator<string> {
        let finished = false;
        try {
          for await (const data of readSseData(response.body!)) {
            idle();
            if (data === '[DONE]') {
              finished = true;
              usage ??= approximate(call, content);
              pause();
              yield data;
              return;
            }
            let chunk: { choices?: { delta?: { content?: unknown } }[]; usage?: unknown; error?: unknown };
            try {
              chunk = JSON.parse(data) as typeof chunk;
            } catch (error) {
              throw new UpstreamError('The model backend sent a malformed stream chunk.', { cause: error });
            }
            if (chunk.error !== undefined) throw new UpstreamError('The model backend failed during the stream.');
            const delta = chunk.choices?.[0]?.delta?.content;
            if (typeof delta === 'string') content += delta;
            const reported = usageOf(chunk.usage);
            if (reported) usage = reported;
            // We always ask for usage; a client that did not gets no usage-only chunk.
            if (!wantsUsage && reported && (chunk.choices?.length ?? 0) === 0) continue;
            // A slow client is not upstream silence: the timer runs only while we wait for the upstream.
            pause();
            yield data;
            idle();
          }
          if (!finished) throw new UpstreamError('The model backend ended the stream early.');
        } catch (error) {
          if (error instanceof UpstreamError) throw error;
          throw new UpstreamError(controller.signal.aborted && !call.signal.aborted ? 'The model backend timed out.' : 'The model backend stream broke off.', { cause: error });
        } finally {
          done();
          // A broken-off stream is still charged: what the client received, approximated.
          usage ??= approximate(call, content);
          if (!finished) controller.abort(new Error('stream closed'));
        }
      }
      return { events: events(), usage: () => usage };
    },
  };
}

function upstreamBody(call: BackendCall, stream: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(call.request)) if (value !== undefined && value !== null) out[key] = value;
  out['model'] = call.backendModel;
  out['stream'] = stream;
  if (stream) out['stream_options'] = { include_usage: true };
  else delete out['stream_options'];
  return out;
}

function statusError(response: Response): Error {
  const { status } = response;
  if (status === 429) {
    const retryAfter = Number(response.headers.get('retry-after'));
    return new RateLimitError('The model backend is rate limited; retry later.', Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter : 5);
  }
  if (status === 404) return new ValidationError('The model backend does not serve this model.', { param: 'model' });
  if (status === 400 || status === 413 || status === 422) return new ValidationError('The model backend rejected the request (e.g. too long for the model).', { param: 'messages' });
  // 401/403 mean Plaza's own upstream key is wrong: the caller cannot fix that, so it is a 502.
  return new UpstreamError(`The model backend answered HTTP ${status}.`);
}

function usageOf(value: unknown): Usage | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  const u = value as Record<string, unknown>;
  const prompt = u['prompt_tokens'];
  const completion = u['completion_tokens'];
  if (!Number.isInteger(prompt) || !Number.isInteger(completion)) return undefined;
  const total = Number.isInteger(u['total_tokens']) ? (u['total_tokens'] as number) : (prompt as number) + (completion as number);
  return { prompt_tokens: prompt as number, completion_tokens: completion as number, total_tokens: total };
}

function contentOf(choices: unknown[]): string {
  const message = (choices[0] as { message?: { content?: unknown } } | undefined)?.message;
  return typeof message?.content === 'string' ? message.content : '';
}

function approximate(call: BackendCall, completion: string): Usage {
  const prompt = countPromptTokens(call.request.messages);
  const tokens = countTokens(completion);
  return { prompt_tokens: prompt, completion_tokens: tokens, total_tokens: prompt + tokens };
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve();
    }, { once: true });
  });
}
