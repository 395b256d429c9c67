import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP, type LookupFunction } from 'node:net';

import { Agent, fetch as undiciFetch, Response as UndiciResponse } from 'undici';

import { assertAddressAllowed, assertHttpUrl, SsrfError } from './ssrf.ts';

/** Resolves a host name to every address it has. */
export type Resolver = (hostname: string) => Promise<string[]>;

/** A fetch with the standard signature (what the MCP SDK transport accepts). */
export type FetchLike = (input: string | URL, init?: RequestInit) => Promise<Response>;

/** Options of createGuardedFetch. */
export interface GuardedFetchOptions {
  /** Let loopback/private/link-local/CGNAT through (development and tests only). */
  allowPrivate: boolean;
  /** Exact addresses allowed despite their range (an operator's allow-list, e.g. one internal host). */
  allowAddresses?: readonly string[];
  /** DNS resolution; defaults to the system resolver. Tests inject names that resolve to loopback. */
  resolve?: Resolver;
  /** Redirect hops followed, each re-checked (default 3). */
  maxRedirects?: number;
  /** Whole request including the body, in ms (default 15 000). */
  timeoutMs?: number;
  /** TCP + TLS connect, in ms (default 5 000). */
  connectTimeoutMs?: number;
  /** Response body cap in bytes (default 5 MiB). */
  maxResponseBytes?: number;
}

/** A guarded fetch and the connection pool behind it. */
export interface GuardedFetch {
  fetch: FetchLike;
  close(): Promise<void>;
}

const systemResolver: Resolver = async (hostname) =>
  (await dnsLookup(hostname, { all: true, verbatim: true })).map((a) => a.address);

/**
 * A fetch for user-supplied URLs: http(s) only; every address the name resolves to is checked
 * and the connection goes to a checked address (the check runs inside the socket's own DNS
 * lookup, so a rebinding answer cannot slip in between check and connect); redirects are followed
 * by hand, at most `maxRedirects`, each hop checked again, never from https to http; body size and
 * total time are capped.
 */
export function createGuardedFetch(options: GuardedFetchOptions): GuardedFetch {
  const { agent, checkUrl } = createGuardedAgent(options);
  const { maxRedirects, timeoutMs, maxBytes } = guardedLimits(options);

  const guardedFetch: FetchLike = async (input, init = {}) => {
    const signal = init.signal
      ? AbortSignal.any([init.signal, AbortSignal.timeout(timeoutMs)])
      : AbortSignal.timeout(timeoutMs);
    let url = new URL(String(input));
    let method = (init.method ?? 'GET').toUpperCase();
    let body = init.body;
    for (let hop = 0; ; hop++) {
      checkUrl(url);
      let response;
      try {
        response = await undiciFetch(url, {
          ...(init as object),
          method,
          body: body as never,
          redirect: 'manual',
          signal,
          dispatcher: agent,
        });
      } catch (error) {
        throw findSsrfError(error) ?? error;
      }
      const location = response.headers.get('location');
      if (response.status < 300 || response.status > 399 || location === null)
        return limitBody(response, maxBytes) as unknown as Response;
      await response.body?.cancel();
      if (hop >= maxRedirects) throw new SsrfError(`Refused: more than ${maxRedirects} redirects.`, 'redirects');
      const next = new URL(location, url);
      // Never down to plain http: what was asked over TLS stays on it (an installer refuses the
      // same redirect, so a source that passed here could not be installed).
      if (url.protocol === 'https:' && next.protocol !== 'https:')
        throw new SsrfError(`Refused: a redirect from https to ${next.protocol.replace(':', '')}.`, 'redirects');
      url = next;
      if (response.status === 303 || ((response.status === 301 || response.status === 302) && method === 'POST')) {
        method = 'GET';
        body = undefined;
      }
    }
  };
  return { fetch: guardedFetch, close: () => agent.close() };
}

/** The redirect, time and size bounds of a guarded client, defaulted and checked. */
export function guardedLimits(options: Pick<GuardedFetchOptions, 'maxRedirects' | 'timeoutMs' | 'maxResponseBytes'>): {
  maxRedirects: number;
  timeoutMs: number;
  maxBytes: number;
} {
  const maxRedirects = options.maxRedirects ?? 3;
  const timeoutMs = options.timeoutMs ?? 15_000;
  const maxBytes = options.maxResponseBytes ?? 5 * 1024 * 1024;
  if (!Number.isInteger(maxRedirects) || maxRedirects < 0)
    throw new TypeError('maxRedirects must be a non-negative integer');
  if (!(timeoutMs > 0) || !(maxBytes > 0)) throw new TypeError('timeoutMs and maxResponseBytes must be positive');
  return { maxRedirects, timeoutMs, maxBytes };
}

/**
 * The guarded connection pool itself: an undici Agent whose sockets only connect to checked
 * addresses (the check runs inside the socket's own DNS lookup, so a rebinding answer cannot slip
 * in between check and connect), and `checkUrl` for what the lookup never sees (the scheme, IP
 * literals). For callers that use undici's `request` directly (the gateway's upstream calls, which
 * follow no redirects and bound sizes and times themselves); `createGuardedFetch` builds on it.
 */
export function createGuardedAgent(
  options: Pick<GuardedFetchOptions, 'allowPrivate' | 'allowAddresses' | 'resolve' | 'timeoutMs' | 'connectTimeoutMs'>,
): {
  agent: Agent;
  checkUrl(url: URL): void;
} {
  const allowList = new Set(options.allowAddresses ?? []);
  const check = (address: string, host?: string) => {
    if (!allowList.has(address)) assertAddressAllowed(address, options.allowPrivate, host);
  };
  const resolve = options.resolve ?? systemResolver;
  const timeoutMs = options.timeoutMs ?? 15_000;
  const lookup: LookupFunction = (hostname, lookupOptions, callback) => {
    resolve(hostname)
      .then(
        (addresses) => {
          if (addresses.length === 0) throw new SsrfError(`${hostname} did not resolve to any address.`, 'dns');
          for (const address of addresses) check(address, hostname);
          const entries = addresses.map((address) => ({ address, family: isIP(address) }));
          if (lookupOptions.all) (callback as (e: null, a: typeof entries) => void)(null, entries);
          else callback(null, entries[0]!.address, entries[0]!.family);
        },
        (error: unknown) => callback(error as NodeJS.ErrnoException, '', 0),
      )
      .catch((error: unknown) => callback(error as NodeJS.ErrnoException, '', 0));
  };
  const agent = new Agent({
    connect: { lookup, timeout: options.connectTimeoutMs ?? 5_000 },
    keepAliveTimeout: 2_000,
    keepAliveMaxTimeout: 10_000,
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
  });
  const checkUrl = (url: URL) => {
    assertHttpUrl(url);
    const host = url.hostname.replace(/^\[|\]$/g, '');
    // IP literals never reach the lookup hook, so they are checked here.
    if (isIP(host) !== 0) check(host);
  };
  return { agent, checkUrl };
}

function findSsrfError(error: unknown): SsrfError | undefined {
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    if (e instanceof SsrfError) return e;
  }
  return undefined;
}

function limitBody(response: UndiciResponse, maxBytes: number): UndiciResponse {
  if (response.body === null) return response;
  let seen = 0;
  const limited = response.body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        seen += chunk.byteLength;
        if (seen > maxBytes)
          controller.error(new SsrfError(`Refused: response larger than ${maxBytes} bytes.`, 'size'));
        else controller.enqueue(chunk);
      },
    }),
  );
  return new UndiciResponse(limited, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
}
