import { type Dispatcher, request } from 'undici';

/** One request to an upstream MCP endpoint. */
export interface UpstreamHttpRequest {
  method: string;
  headers: Record<string, string>;
  body?: string | undefined;
  signal?: AbortSignal;
}

/** The upstream's answer: status, headers, and the body as it arrives (Node buffers, no web streams). */
export interface UpstreamHttpResponse {
  status: number;
  /** A response header by its lower-case name (the first value when repeated). */
  header(name: string): string | undefined;
  body: AsyncIterable<Buffer>;
  /** Stops reading the body and releases the connection. */
  discard(): void;
}

/**
 * How the gateway talks HTTP to upstreams. No redirects are followed (a 3xx is an answer like any
 * other); sizes and times are bounded by the caller. `plaza serve` passes one built on the
 * SSRF-guarded connection pool.
 */
export type UpstreamHttp = (url: string, init: UpstreamHttpRequest) => Promise<UpstreamHttpResponse>;

/**
 * An {@link UpstreamHttp} on undici's `request` (its Node-stream API: one exchange costs a fraction
 * of `fetch`, which builds web streams, Request and Response objects around the same socket).
 * `checkUrl` runs before every request (e.g. the SSRF guard's check of schemes and IP literals);
 * `dispatcher` is the connection pool (default: undici's global one).
 */
export function createUpstreamHttp(
  options: { dispatcher?: Dispatcher; checkUrl?: (url: URL) => void } = {},
): UpstreamHttp {
  return async (url, init) => {
    const target = new URL(url);
    options.checkUrl?.(target);
    const answer = await request(target, {
      method: init.method as Dispatcher.HttpMethod,
      headers: init.headers,
      body: init.body,
      signal: init.signal,
      ...(options.dispatcher ? { dispatcher: options.dispatcher } : {}),
    });
    // A body aborted or cut after nobody reads it any more (the client left, the call ended) must
    // not become an unhandled 'error' event; a reader still sees the error through iteration.
    answer.body.on('error', ignore);
    const headers = answer.headers;
    return {
      status: answer.statusCode,
      header(name) {
        const value = headers[name];
        return Array.isArray(value) ? value[0] : value;
      },
      body: answer.body,
      discard() {
        answer.body.destroy();
      },
    };
  };
}

function ignore(): void {}
