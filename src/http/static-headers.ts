import type { IncomingMessage, ServerResponse } from 'node:http';

type Middleware = (req: IncomingMessage, res: ServerResponse, next: (error?: unknown) => void) => void;

/**
 * Runs a middleware that only ever sets fixed response headers (helmet) once, against a recording
 * response, and returns a middleware that sets the same headers directly: the same bytes on the
 * wire without the per-request work of a dozen small header middlewares. Throws at start-up if
 * the middleware did anything but set or remove headers synchronously.
 */
export function staticHeaders(
  middleware: Middleware,
): (req: IncomingMessage, res: ServerResponse, next: () => void) => void {
  const set = new Map<string, string | number | readonly string[]>();
  const removed = new Set<string>();
  let called = false;
  const recorder = {
    setHeader(name: string, value: string | number | readonly string[]) {
      set.set(name, value);
      removed.delete(name.toLowerCase());
      return recorder;
    },
    removeHeader(name: string) {
      set.delete(name);
      removed.add(name.toLowerCase());
    },
    getHeader: () => undefined,
  };
  middleware(
    { headers: {}, method: 'GET', url: '/' } as IncomingMessage,
    recorder as unknown as ServerResponse,
    (error?: unknown) => {
      if (error) throw error;
      called = true;
    },
  );
  if (!called) throw new Error('staticHeaders: the middleware did not finish synchronously');
  const headers = [...set];
  const remove = [...removed];
  return (_req, res, next) => {
    for (const [name, value] of headers) res.setHeader(name, value);
    for (const name of remove) res.removeHeader(name);
    next();
  };
}

/**
 * Security headers of the machine-facing answers (JSON, event streams, JSON-RPC): what OWASP's REST
 * guidance asks of an API — no sniffing, never framed or rendered as a document, no referrer —
 * without helmet's browsing-context headers (COOP, Origin-Agent-Cluster, X-DNS-Prefetch-Control,
 * X-Download-Options, …), which mean nothing to an API client and which every client must still
 * read: on a streamed chat completion they cost the caller ~20% more CPU to parse (bench/README).
 */
export function apiSecurityHeaders(options: {
  https: boolean;
}): (req: IncomingMessage, res: ServerResponse, next: () => void) => void {
  const headers: Array<[string, string]> = [
    ['Content-Security-Policy', "default-src 'none'; frame-ancestors 'none'"],
    ['X-Content-Type-Options', 'nosniff'],
    ['Referrer-Policy', 'no-referrer'],
  ];
  if (options.https) headers.push(['Strict-Transport-Security', 'max-age=31536000; includeSubDomains']);
  return (_req, res, next) => {
    for (const [name, value] of headers) res.setHeader(name, value);
    next();
  };
}

const API_PATH = /^\/(?:api|mcp|oauth|health|\.well-known|openapi\.json|share|agpk)(?:[/?]|$)/;

/**
 * Whether a request URL is one of Plaza's machine-facing routes: the API, the gateway, health,
 * keys, the OpenAPI document, the package market (`/share/v1`) and the AGPK contract (`/agpk/v1`).
 */
export function isApiPath(url: string): boolean {
  return API_PATH.test(url);
}
