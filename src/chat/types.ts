import type { ChatRequest } from './schema.ts';

/** Token usage of one completion (OpenAI field names). */
export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

/** What a backend needs to answer one request. */
export interface BackendCall {
  request: ChatRequest;
  /** The model id the backend knows (an alias already resolved). */
  backendModel: string;
  /** The caller's preferred locale (from `Accept-Language`), a hint only. */
  locale: string | undefined;
  /** Aborted when the client goes away. */
  signal: AbortSignal;
}

/** A completed non-streaming answer: the OpenAI body as sent to the client, and its usage. */
export interface CompletionResult {
  body: Record<string, unknown>;
  usage: Usage;
}

/**
 * A started stream: `events` yields the `data:` payloads in order (JSON text of
 * `chat.completion.chunk` objects, then `[DONE]`), in batches: what one upstream read carried
 * goes on as one array, so a completion crosses each async layer once or twice, not once per
 * chunk. Batches are never empty. `usage()` is known once `events` is drained.
 * The promise returning it settles only after the backend answered, so failures before the first
 * byte are ordinary HTTP errors.
 */
export interface CompletionStream {
  events: AsyncIterable<string[]>;
  usage(): Usage | undefined;
}

/** A model backend: the embedded assistant or an OpenAI-compatible upstream. */
export interface ChatBackend {
  /** The completion budget of a request that sets none, when it is less than the service's cap (the embedded assistant's answers are short). */
  readonly defaultMaxTokens?: number;
  complete(call: BackendCall): Promise<CompletionResult>;
  stream(call: BackendCall): Promise<CompletionStream>;
}
