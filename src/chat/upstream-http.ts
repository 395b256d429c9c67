import { StringDecoder } from 'node:string_decoder';

import { Agent, type Dispatcher } from 'undici';

import { type Clock, RateLimitError, systemClock, UpstreamError, ValidationError } from '../kernel/index.ts';
import { parseRetryAfter } from './retry-after.ts';
import { SseParser } from './sse.ts';

/** Options of {@link createUpstreamHttp}. */
export interface UpstreamHttpOptions {
  /** The URL every request is POSTed to. */
  endpoint: string;
  /** Sent as `Authorization: Bearer …` when set. */
  apiKey: string | undefined;
  /** Time to connect and to the response headers, and the longest silence of the body afterwards. */
  timeoutMs: number;
  /**
   * Time to the response headers of a non-streamed (`json`) request, whose headers come with the
   * whole answer; and the longest an event stream may last.
   */
  completionTimeoutMs: number;
  /** Extra attempts on connection errors and 5xx, only before the first byte. */
  maxRetries: number;
  /** Reads an upstream's `Retry-After` given as a date. Default the system clock. */
  clock?: Clock;
}

/** POSTs a JSON body upstream; resolves with an answered (2xx) exchange or throws a §7-mapped error. */
export type UpstreamPost = (body: string, mode: 'sse' | 'json', signal: AbortSignal) => Promise<UpstreamExchange>;

const RETRYABLE = new Set([500, 502, 503, 504]);
/** Statuses that are the caller's doing: the upstream's error message is relayed to the caller. */
const CALLERS_FAULT = new Set([400, 413, 422]);
/** Most of an upstream error body read for its message; the rest is discarded. */
const MAX_ERROR_BYTES = 64 * 1024;
/** Longest upstream error message relayed. */
const MAX_ERROR_MESSAGE = 1_000;
/** SSE events read before push() takes them at which the upstream's body is paused. */
const PAUSE_AT_EVENTS = 64;
/** Largest non-streamed answer read from the model backend (an answer is text; 16 MiB is no answer). */
const MAX_JSON_BYTES = 16 * 1024 * 1024;
const TIMEOUTS = new Set([
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'UND_ERR_CONNECT_TIMEOUT',
  'PLAZA_STREAM_TIMEOUT',
]);
/**
 * A pooled connection the upstream closed while it sat idle, seen when the request is written:
 * undici's socket error on a connection that had already carried an answer (bytes read before
 * this request's). The same error on a fresh connection is the upstream refusing this request.
 * A reset (RST) arrives as the bare ECONNRESET or EPIPE, which says nothing of its socket: it
 * counts as stale once the pool has had an answer (`pooled`), so a connection may have been reused.
 */
function staleSocket(error: unknown, pooled: boolean): boolean {
  const { code, socket } = error as { code?: unknown; socket?: { bytesRead?: unknown } };
  if (code === 'ECONNRESET' || code === 'EPIPE') return pooled;
  return code === 'UND_ERR_SOCKET' && typeof socket?.bytesRead === 'number' && socket.bytesRead > 0;
}

/**
 * The upstream's HTTP client: undici's dispatcher with a handler object and no streams, a fraction
 * of the CPU of `fetch` (web streams, a Response per call) or of node:http (a Readable per
 * response) — the proxy's profile was dominated by them. undici's own timers give the timeouts:
 * to the headers, and between body bytes only while Plaza is reading (not while the body is
 * paused for a slow client). Connection errors and 5xx are retried with backoff before the first
 * byte only, 1 + maxRetries attempts in all; a request that met a closed pooled connection is
 * resent at once, and at no cost only when no retry is left (so maxRetries 0 makes 2 attempts).
 */
export function createUpstreamHttp(options: UpstreamHttpOptions): UpstreamPost {
  const url = new URL(options.endpoint);
  const { timeoutMs } = options;
  const clock = options.clock ?? systemClock;
  const agent = new Agent({ connect: { timeout: timeoutMs }, headersTimeout: timeoutMs, bodyTimeout: timeoutMs });
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (options.apiKey) headers['authorization'] = `Bearer ${options.apiKey}`;
  const target = { origin: url.origin, path: `${url.pathname}${url.search}`, method: 'POST' as const };
  const accept = { sse: { ...headers, accept: 'text/event-stream' }, json: { ...headers, accept: 'application/json' } };
  const headersTimeout = { sse: timeoutMs, json: options.completionTimeoutMs };
  /** Whether the upstream has answered a request yet: its connections may be kept-alive ones since. */
  let pooled = false;

  return async (body, mode, signal) => {
    let lastError: unknown;
    let staleRetry = true;
    let resendNow = false;
    for (let attempt = 0; attempt <= options.maxRetries; attempt++) {
      if (attempt > 0 && !resendNow) await sleep(Math.min(2_000, 200 * 2 ** (attempt - 1)), signal);
      resendNow = false;
      if (signal.aborted) throw new UpstreamError('The client went away.');
      const exchange = new UpstreamExchange(mode, signal, options.completionTimeoutMs);
      agent.dispatch({ ...target, headers: accept[mode], body, headersTimeout: headersTimeout[mode] }, exchange);
      try {
        await exchange.started;
      } catch (error) {
        exchange.release();
        if (signal.aborted) throw new UpstreamError('The client went away.', { cause: error });
        const code = (error as { code?: string }).code ?? '';
        if (staleRetry && staleSocket(error, pooled)) {
          // Resent at once (no backoff: nothing says the upstream is in trouble). It spends a
          // retry when one is left: an upstream that resets every request, met first on a
          // kept-alive connection, looks the same. Free only with none left, so that
          // LLM_MAX_RETRIES=0 still survives a pooled connection the upstream closed.
          staleRetry = false;
          resendNow = true;
          lastError = new UpstreamError('The model backend could not be reached.', { cause: error });
          if (attempt === options.maxRetries) attempt--;
          continue;
        }
        lastError = new UpstreamError(
          TIMEOUTS.has(code) ? 'The model backend timed out.' : 'The model backend could not be reached.',
          { cause: error },
        );
        continue;
      }
      pooled = true;
      if (exchange.status >= 200 && exchange.status < 300) return exchange;
      // Only a rejection of the request itself is read (its message tells the caller what to fix:
      // a tool schema, the context length); other error bodies are drained, not read, and never
      // reach the client (nor the logs).
      const detail = CALLERS_FAULT.has(exchange.status) ? await exchange.errorDetail() : undefined;
      exchange.release();
      lastError = statusError(exchange.status, parseRetryAfter(exchange.retryAfter, clock.now()), detail);
      if (!RETRYABLE.has(exchange.status)) throw lastError;
    }
    throw lastError;
  };
}

/**
 * One request to the upstream, as an undici dispatch handler: resolves `started` at the response
 * headers, then hands out the body — SSE event data pushed in batches as they are read (one per
 * upstream read; see push) or the whole JSON text. A class, not closures: this runs per
 * request, and every named closure costs a defineProperty under tsx's keepNames.
 */
export class UpstreamExchange implements Dispatcher.DispatchHandler {
  status = 0;
  retryAfter: string | undefined;
  readonly started: Promise<void>;
  readonly #mode: 'sse' | 'json';
  readonly #signal: AbortSignal;
  readonly #streamLimitMs: number;
  #streamTimer: NodeJS.Timeout | undefined;
  #resolveStart!: () => void;
  #rejectStart!: (error: Error) => void;
  #controller: Dispatcher.DispatchController | undefined;
  #cut: Error | undefined;
  #discard = false;
  #errorBody = false;
  #parser: SseParser | undefined;
  #decoder: StringDecoder | undefined;
  #queue: string[] = [];
  #parts: Buffer[] = [];
  #size = 0;
  #ended = false;
  #failure: Error | undefined;
  #wake: (() => void) | undefined;
  /** The push consumer of SSE batches (see push); next() is not used then. */
  #deliver: ((batch: string[] | undefined, error?: Error) => void) | undefined;
  #delivered = false;

  /**
   * `streamLimitMs`: the longest an event stream may last from its headers. Silences are undici's
   * body timeout, which any byte resets: an upstream's `: keep-alive` comments say it is still
   * working (a model thinking before its first token), so they keep a stream alive, up to this.
   */
  constructor(mode: 'sse' | 'json', signal: AbortSignal, streamLimitMs: number) {
    this.#mode = mode;
    this.#signal = signal;
    this.#streamLimitMs = streamLimitMs;
    this.started = new Promise<void>((resolve, reject) => {
      this.#resolveStart = resolve;
      this.#rejectStart = reject;
    });
    signal.addEventListener('abort', this, { once: true });
  }

  /** The client went away (AbortSignal listener object). */
  handleEvent(): void {
    this.#abort(new Error('client went away'));
  }

  /** True when the upstream was cut for silence (undici's headers or body timeout). */
  timedOut(): boolean {
    const code = (this.#failure as { code?: string } | undefined)?.code;
    return code !== undefined && TIMEOUTS.has(code);
  }

  /**
   * Hands every batch of SSE event data to `deliver` as soon as it is read, from undici's own
   * callbacks, instead of waiting for next(); then `deliver(undefined)` at the end of the body, or
   * `deliver(undefined, error)` when it broke off. Batches read before the call go first.
   */
  push(deliver: (batch: string[] | undefined, error?: Error) => void): void {
    this.#deliver = deliver;
    if (this.#queue.length > 0) {
      const batch = this.#queue;
      this.#queue = [];
      this.#hand(batch);
    }
    if (this.#ended || this.#failure) this.#deliverEnd();
    else this.#controller?.resume();
  }

  /** Stops reading the body (a slow client): undici's socket is paused until resume(). */
  pause(): void {
    this.#controller?.pause();
  }

  resume(): void {
    this.#controller?.resume();
  }

  /** The whole body as text. */
  async text(): Promise<string> {
    while (!this.#ended) {
      if (this.#failure) throw this.#failure;
      await this.#waitForBytes();
    }
    return Buffer.concat(this.#parts).toString('utf8');
  }

  /**
   * The message (and `param`) of a non-2xx answer's OpenAI-style error body — `{error:{message,
   * param}}` (OpenAI, vLLM, Ollama, llama.cpp), `{error:"…"}` (TGI) or `{message}` (older vLLM) —
   * clipped; undefined when there is none.
   */
  async errorDetail(): Promise<{ message: string; param: string | null } | undefined> {
    let body: { error?: unknown; message?: unknown; param?: unknown };
    try {
      body = JSON.parse(await this.text()) as typeof body;
    } catch {
      return undefined;
    }
    if (body === null || typeof body !== 'object') return undefined;
    const error = typeof body.error === 'object' && body.error !== null ? (body.error as typeof body) : body;
    const message =
      typeof error.message === 'string' ? error.message : typeof body.error === 'string' ? body.error : undefined;
    if (message === undefined || message.trim() === '') return undefined;
    return {
      message: message.length > MAX_ERROR_MESSAGE ? `${message.slice(0, MAX_ERROR_MESSAGE)}…` : message,
      param: typeof error.param === 'string' ? error.param : null,
    };
  }

  /** After `[DONE]`: the rest is read and discarded, so the connection goes back to the pool. */
  drain(): void {
    this.#discard = true;
    this.#queue = [];
    this.#controller?.resume();
  }

  /** The stream has lasted `streamLimitMs`. */
  tooLong(): void {
    this.#fail(
      Object.assign(new Error(`the model backend's stream lasted ${this.#streamLimitMs} ms`), {
        code: 'PLAZA_STREAM_TIMEOUT',
      }),
    );
  }

  /** Cuts the exchange: the upstream sees its connection close. */
  destroy(): void {
    this.#abort(new Error('stream closed'));
  }

  /** Stops listening for the client going away. */
  release(): void {
    this.#signal.removeEventListener('abort', this);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.#controller = controller;
    if (this.#cut) controller.abort(this.#cut);
  }

  onResponseStart(
    _controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: Record<string, string | string[] | undefined>,
  ): void {
    this.status = statusCode;
    if (statusCode < 200 || statusCode >= 300) {
      // Kept (the start of it) only where it may be relayed.
      if (CALLERS_FAULT.has(statusCode)) this.#errorBody = true;
      else this.#discard = true;
      const retryAfter = headers['retry-after'];
      this.retryAfter = Array.isArray(retryAfter) ? retryAfter[0] : retryAfter;
    } else if (this.#mode === 'sse') {
      this.#parser = new SseParser();
      this.#decoder = new StringDecoder('utf8');
      this.#streamTimer = setTimeout(streamTooLong, this.#streamLimitMs, this);
    }
    this.#resolveStart();
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.#discard) return;
    if (this.#errorBody) {
      this.#size += chunk.length;
      if (this.#size <= MAX_ERROR_BYTES) this.#parts.push(chunk);
      return;
    }
    if (!this.#parser) {
      this.#size += chunk.length;
      if (this.#size > MAX_JSON_BYTES)
        return this.#fail(new UpstreamError(`The model backend's answer exceeds ${MAX_JSON_BYTES} bytes.`));
      this.#parts.push(chunk);
      return;
    }
    try {
      this.#parser.push(this.#decoder!.write(chunk), this.#queue);
    } catch (error) {
      // An event past the parser's limit: the stream is not read further.
      return this.#fail(error instanceof Error ? error : new Error(String(error)));
    }
    if (this.#queue.length === 0) return;
    if (this.#deliver) {
      const batch = this.#queue;
      this.#queue = [];
      this.#hand(batch);
      return;
    }
    // Not taken yet (read with the headers, before push): held, and the body paused once many
    // pile up. Not on every read: a paused undici parser puts the rest of its buffer back into
    // the socket's stream and parses it again on resume, which showed in the proxy's profile.
    if (this.#queue.length >= PAUSE_AT_EVENTS) controller.pause();
  }

  onResponseEnd(): void {
    clearTimeout(this.#streamTimer);
    if (this.#parser && !this.#discard) {
      try {
        this.#parser.push(this.#decoder!.end(), this.#queue);
        this.#parser.end(this.#queue);
      } catch (error) {
        // The last event past the parser's limit: the stream broke off there.
        return this.#fail(error instanceof Error ? error : new Error(String(error)));
      }
    }
    this.#ended = true;
    if (this.#deliver) {
      if (this.#queue.length > 0) {
        const batch = this.#queue;
        this.#queue = [];
        this.#hand(batch);
      }
      this.#deliverEnd();
      return;
    }
    this.#notify();
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    clearTimeout(this.#streamTimer);
    this.#failure ??= error;
    this.#rejectStart(error);
    if (this.#deliver) this.#deliverEnd();
    this.#notify();
  }

  #fail(error: Error): void {
    this.#failure ??= error;
    this.#discard = true;
    this.#queue = [];
    this.#abort(error);
    if (this.#deliver) this.#deliverEnd();
    this.#notify();
  }

  /** The push consumer's end: once, with the failure if the body broke off. */
  #deliverEnd(): void {
    if (this.#delivered) return;
    this.#delivered = true;
    this.#hand(undefined, this.#failure);
  }

  /**
   * Calls the push consumer. This runs inside undici's callbacks (data, end, error) and the stream
   * timer, where a throw is an uncaught exception that takes the process down: a consumer that
   * throws fails the exchange (the upstream is cut) and hears the end with what it threw. The
   * consumer is to end its stream and log; a second throw, from that end itself, is dropped here
   * so that undici never sees it (the token API's sink catches and logs its own).
   */
  #hand(batch: string[] | undefined, error?: Error): void {
    try {
      this.#deliver!(batch, error);
    } catch (thrown) {
      const failure = thrown instanceof Error ? thrown : new Error(String(thrown));
      this.#failure ??= failure;
      this.#discard = true;
      this.#queue = [];
      this.#abort(failure);
      if (this.#delivered) return;
      this.#delivered = true;
      try {
        this.#deliver!(undefined, failure);
      } catch {
        // See above: nothing may reach undici.
      }
    }
  }

  #abort(reason: Error): void {
    clearTimeout(this.#streamTimer);
    this.#cut ??= reason;
    if (this.#controller && !this.#controller.aborted) this.#controller.abort(reason);
  }

  #waitForBytes(): Promise<void> {
    const promise = new Promise<void>((resolve) => (this.#wake = resolve));
    this.#controller?.resume();
    return promise;
  }

  #notify(): void {
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }
}

function streamTooLong(exchange: UpstreamExchange): void {
  exchange.tooLong();
}

/** Plaza's advice to a client the upstream rate-limited without saying (or readably saying) how long. */
const DEFAULT_RETRY_AFTER_SECONDS = 5;
/** Longest wait passed on: an upstream's 1e308, or a date years away, is no advice to pass on. */
const MAX_RETRY_AFTER_SECONDS = 3_600;

function statusError(
  status: number,
  retryAfter: number | undefined,
  detail: { message: string; param: string | null } | undefined,
): Error {
  if (status === 429) {
    // Whole seconds from 1 (RateLimitError's floor: a date already past, or 0, means "now") to an hour.
    return new RateLimitError(
      'The model backend is rate limited; retry later.',
      Math.min(retryAfter ?? DEFAULT_RETRY_AFTER_SECONDS, MAX_RETRY_AFTER_SECONDS),
    );
  }
  if (status === 404) return new ValidationError('The model backend does not serve this model.', { param: 'model' });
  if (CALLERS_FAULT.has(status)) {
    if (detail)
      return new ValidationError(`The model backend rejected the request: ${detail.message}`, { param: detail.param });
    return new ValidationError('The model backend rejected the request (e.g. too long for the model).', {
      param: 'messages',
    });
  }
  // 401/403 mean Plaza's own upstream key is wrong: the caller cannot fix that, so it is a 502.
  return new UpstreamError(`The model backend answered HTTP ${status}.`);
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });
}
