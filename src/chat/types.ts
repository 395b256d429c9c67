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
 * Where a started stream's events go, pushed as they arrive: no async step per batch (a relayed
 * completion used to cross three async generators).
 */
export interface StreamSink {
  /**
   * Event `data:` payloads that arrived together, in order (JSON text of `chat.completion.chunk`
   * objects, then `[DONE]`): what one upstream read carried. Never empty; the sink may keep it.
   */
  events(batch: string[]): void;
  /** The stream is over: finished, or failed after it started (`error`). Called once, last. */
  end(error?: unknown): void;
}

/** What a sink may do to the stream feeding it: hold it while a slow client catches up. */
export interface StreamControl {
  pause(): void;
  resume(): void;
}

/**
 * A started stream: `start` delivers its events to a sink; `usage()` is known once the sink has
 * been ended. The promise returning it settles only after the backend answered, so failures
 * before the first byte are ordinary HTTP errors. A stream ends (its sink's `end`) when the
 * call's signal aborts, whether or not it is paused.
 */
export interface CompletionStream {
  /** Starts delivering to `sink`; call once. */
  start(sink: StreamSink): StreamControl;
  usage(): Usage | undefined;
}

/** A model backend: the embedded assistant or an OpenAI-compatible upstream. */
export interface ChatBackend {
  /** The completion budget of a request that sets none, when it is less than the service's cap (the embedded assistant's answers are short). */
  readonly defaultMaxTokens?: number;
  complete(call: BackendCall): Promise<CompletionResult>;
  stream(call: BackendCall): Promise<CompletionStream>;
}
