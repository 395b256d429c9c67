import { StringDecoder } from 'node:string_decoder';

import { type Dispatcher, request as undiciRequest } from 'undici';

import { createGuardedAgent, type GuardedFetchOptions, guardedLimits } from './guarded-fetch.ts';
import { SsrfError } from './ssrf.ts';

/** What a guarded request sends; the body is a string (JSON-RPC), never a stream. */
export interface GuardedRequestInit {
  method?: string;
  /** Lower-case header names. */
  headers?: Record<string, string>;
  body?: string;
  signal?: AbortSignal;
  /** `manual`: a 3xx is handed to `read` as the answer instead of being followed (default `follow`). */
  redirect?: 'follow' | 'manual';
  /**
   * Called before each request goes out, the first and every redirect hop, with the URL it goes
   * to; the request is not sent when it throws (the error is the request's). For budgets that
   * count what is actually sent.
   */
  beforeSend?: (url: URL) => Promise<void>;
}

/** A response to a guarded request; its body is read as it arrives, capped in size. */
export interface GuardedResponse {
  status: number;
  /** A header by lower-case name; a repeated header is joined with ", " as fetch joins it. */
  header(name: string): string | undefined;
  /** The body as UTF-8 text in chunks; fails with an SsrfError past the size cap. */
  chunks(): AsyncIterable<string>;
  /** The whole body as UTF-8 text (capped). */
  text(): Promise<string>;
}

/**
 * Sends one request and hands the final response to `read`; what `read` leaves unread is dropped
 * (with its connection) when it returns. The time cap covers reading the body too.
 */
export type GuardedRequest = <T>(
  url: string | URL,
  init: GuardedRequestInit,
  read: (response: GuardedResponse) => Promise<T>,
) => Promise<T>;

/** A guarded request function and the connection pool behind it. */
export interface GuardedRequester {
  request: GuardedRequest;
  close(): Promise<void>;
}

/**
 * The guard of `createGuardedFetch` (http(s) only, every address checked inside the socket's own
 * lookup, redirects followed by hand and checked again, size and time capped) without the WHATWG
 * fetch machinery: no Request, Headers or web streams per call, for callers that make thousands of
 * small requests (a probe round makes five per endpoint).
 */
export function createGuardedRequest(options: GuardedFetchOptions): GuardedRequester {
  const { agent, checkUrl } = createGuardedAgent(options);
  const { maxRedirects, timeoutMs, maxBytes } = guardedLimits(options);

  const request: GuardedRequest = async (input, init, read) => {
    const deadline = new AbortController();
    const timer = setTimeout(
      () => deadline.abort(new DOMException(`Request timed out after ${timeoutMs} ms.`, 'TimeoutError')),
      timeoutMs,
    );
    const onAbort = () => deadline.abort(init.signal?.reason);
    if (init.signal?.aborted) onAbort();
    else init.signal?.addEventListener('abort', onAbort, { once: true });
    let body: Dispatcher.ResponseData['body'] | undefined;
    try {
      let url = new URL(String(input));
      let method = (init.method ?? 'GET').toUpperCase();
      let payload = init.body;
      for (let hop = 0; ; hop++) {
        checkUrl(url);
        await init.beforeSend?.(url);
        let response: Dispatcher.ResponseData;
        try {
          response = await undiciRequest(url, {
            method: method as Dispatcher.HttpMethod,
            headers: init.headers,
            body: payload,
            signal: deadline.signal,
            dispatcher: agent,
          });
        } catch (error) {
          throw findSsrfError(error) ?? error;
        }
        body = response.body;
        const location = headerValue(response.headers, 'location');
        if (
          response.statusCode < 300 ||
          response.statusCode > 399 ||
          location === undefined ||
          init.redirect === 'manual'
        ) {
          return await read(cappedResponse(response, maxBytes));
        }
        discard(body);
        if (hop >= maxRedirects) throw new SsrfError(`Refused: more than ${maxRedirects} redirects.`, 'redirects');
        url = new URL(location, url);
        if (
          response.statusCode === 303 ||
          ((response.statusCode === 301 || response.statusCode === 302) && method === 'POST')
        ) {
          method = 'GET';
          payload = undefined;
        }
      }
    } finally {
      clearTimeout(timer);
      init.signal?.removeEventListener('abort', onAbort);
      if (body !== undefined && !body.readableEnded) discard(body);
    }
  };
  return { request, close: () => agent.close() };
}

// Drops an unread body and its connection (a stream still open after the awaited answer).
function discard(body: Dispatcher.ResponseData['body']): void {
  body.on('error', () => undefined);
  body.destroy();
}

function headerValue(headers: Dispatcher.ResponseData['headers'], name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
}

function cappedResponse(response: Dispatcher.ResponseData, maxBytes: number): GuardedResponse {
  const { body } = response;
  const tooLarge = () => new SsrfError(`Refused: response larger than ${maxBytes} bytes.`, 'size');
  return {
    status: response.statusCode,
    header: (name) => headerValue(response.headers, name),
    async *chunks() {
      const decoder = new StringDecoder('utf8');
      let seen = 0;
      for await (const chunk of body as AsyncIterable<Buffer>) {
        seen += chunk.byteLength;
        if (seen > maxBytes) throw tooLarge();
        const text = decoder.write(chunk);
        if (text !== '') yield text;
      }
      const rest = decoder.end();
      if (rest !== '') yield rest;
    },
    // Events rather than an async iterator: most bodies are one small chunk.
    text() {
      return new Promise<string>((resolve, reject) => {
        const parts: Buffer[] = [];
        let seen = 0;
        body.on('data', (chunk: Buffer) => {
          seen += chunk.byteLength;
          if (seen > maxBytes) body.destroy(tooLarge());
          else parts.push(chunk);
        });
        body.once('error', reject);
        body.once('end', () =>
          resolve(parts.length === 1 ? parts[0]!.toString('utf8') : Buffer.concat(parts).toString('utf8')),
        );
      });
    },
  };
}

function findSsrfError(error: unknown): SsrfError | undefined {
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    if (e instanceof SsrfError) return e;
  }
  return undefined;
}
