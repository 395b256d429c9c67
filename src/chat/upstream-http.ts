import { Agent as HttpAgent, type IncomingMessage, request as httpRequest, type RequestOptions } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';

import { RateLimitError, UpstreamError, ValidationError } from '../kernel/index.ts';

/** Options of {@link createUpstreamHttp}. */
export interface UpstreamHttpOptions {
  /** The URL every request is POSTed to. */
  endpoint: string;
  /** Sent as `Authorization: Bearer …` when set. */
  apiKey: string | undefined;
  /** Time to the response headers, and the longest wait for the upstream afterwards. */
  timeoutMs: number;
  /** Extra attempts on connection errors and 5xx, only before the first byte. */
  maxRetries: number;
}

/** One answered POST: the response (status 2xx) and the handles of its timer and lifetime. */
export interface UpstreamExchange {
  response: IncomingMessage;
  /** Starts the silence timer (while Plaza waits for upstream bytes). */
  arm(): void;
  /** Stops the silence timer (while the client is being written to). */
  disarm(): void;
  /** True once the timer cut the exchange (and not the client going away). */
  timedOut(): boolean;
  /** Cuts the exchange: the upstream sees its connection close. */
  destroy(): void;
  /** Releases the timer and the client-abort listener (the connection goes back to the pool). */
  release(): void;
}

/** POSTs JSON to the upstream; resolves with an OK exchange or throws a §7-mapped error. */
export type UpstreamPost = (body: string, stream: boolean, signal: AbortSignal) => Promise<UpstreamExchange>;

const RETRYABLE = new Set([500, 502, 503, 504]);
const STALE_SOCKET = new Set(['ECONNRESET', 'EPIPE']);

/**
 * The upstream's HTTP client: node:http(s) over one keep-alive agent, which costs a fraction of
 * undici `fetch` and its web streams per call (the proxy's profile was dominated by them). Retries
 * connection errors and 5xx with backoff before the first byte only; a request that hit a pooled
 * connection the upstream had just closed is resent once at no cost to the retry budget.
 */
export function createUpstreamHttp(options: UpstreamHttpOptions): UpstreamPost {
  const url = new URL(options.endpoint);
  const https = url.protocol === 'https:';
  const send = https ? httpsRequest : httpRequest;
  const agent = https ? new HttpsAgent({ keepAlive: true, scheduling: 'lifo' }) : new HttpAgent({ keepAlive: true, scheduling: 'lifo' });
  const target: RequestOptions = {
    method: 'POST',
    protocol: url.protocol,
    hostname: url.hostname.replace(/^\[(.*)\]$/, '$1'),
    port: url.port,
    path: `${url.pathname}${url.search}`,
    agent,
  };
  const baseHeaders: Record<string, string> = { 'content-type': 'application/json' };
  if (options.apiKey) baseHeaders['authorization'] = `Bearer ${options.apiKey}`;

  /** One attempt: resolves at the response headers, whatever the status. */
  function tryOnce(body: string, stream: boolean, signal: AbortSignal): Promise<UpstreamExchange> {
    return new Promise((resolve, reject) => {
      let timedOut = false;
      let timer: NodeJS.Timeout | undefined;
      const req = send({
        ...target,
        headers: { ...baseHeaders, accept: stream ? 'text/event-stream' : 'application/json', 'content-length': String(Buffer.byteLength(body)) },
      });
      const onAbort = () => req.destroy(new Error('client went away'));
      const arm = () => {
        clearTimeout(timer);
        timer = setTimeout(() => {
          timedOut = true;
          req.destroy(new Error('upstream timeout'));
        }, options.timeoutMs);
      };
      const disarm = () => clearTimeout(timer);
      const release = () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      arm();
      req.once('response', (response) => {
        disarm();
        resolve({ response, arm, disarm, timedOut: () => timedOut, destroy: () => req.destroy(), release });
      });
      // Kept for the exchange's life: a request destroyed mid-stream still emits 'error'.
      req.on('error', (error) => {
        release();
        reject(Object.assign(error, { timedOut, reused: req.reusedSocket }));
      });
      req.end(body);
    });
  }

  return async (body, stream, signal) => {
    let lastError: unknown;
    let staleRetry = true;
    for (let attempt = 0; attempt <= options.maxRetries; attempt++) {
      if (attempt > 0) await sleep(Math.min(2_000, 200 * 2 ** (attempt - 1)), signal);
      if (signal.aborted) throw new UpstreamError('The client went away.');
      let exchange: UpstreamExchange;
      try {
        exchange = await tryOnce(body, stream, signal);
      } catch (error) {
        const { timedOut, reused, code } = error as { timedOut?: boolean; reused?: boolean; code?: string };
        if (signal.aborted) throw new UpstreamError('The client went away.', { cause: error });
        // A pooled connection closed by the upstream while idle: resend at once, without backoff.
        if (reused && staleRetry && !timedOut && code !== undefined && STALE_SOCKET.has(code)) {
          staleRetry = false;
          attempt--;
          continue;
        }
        lastError = new UpstreamError(timedOut ? 'The model backend timed out.' : 'The model backend could not be reached.', { cause: error });
        continue;
      }
      const { response } = exchange;
      const status = response.statusCode ?? 0;
      if (status >= 200 && status < 300) {
        exchange.arm();
        return exchange;
      }
      // Drained, not read: the upstream's error body never reaches the client (nor the logs).
      response.resume();
      exchange.release();
      lastError = statusError(status, response.headers['retry-after']);
      if (!RETRYABLE.has(status)) throw lastError;
    }
    throw lastError;
  };
}

function statusError(status: number, retryAfterHeader: string | undefined): Error {
  if (status === 429) {
    const retryAfter = Number(retryAfterHeader);
    return new RateLimitError('The model backend is rate limited; retry later.', Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter : 5);
  }
  if (status === 404) return new ValidationError('The model backend does not serve this model.', { param: 'model' });
  if (status === 400 || status === 413 || status === 422) return new ValidationError('The model backend rejected the request (e.g. too long for the model).', { param: 'messages' });
  // 401/403 mean Plaza's own upstream key is wrong: the caller cannot fix that, so it is a 502.
  return new UpstreamError(`The model backend answered HTTP ${status}.`);
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
