/**
 * DNS-rebinding protection for the gateway's MCP endpoints (transport spec: a server MUST validate
 * `Origin`; a refused one gets 403). A page on an attacker's name that the attacker's DNS points at
 * Plaza sends that name in `Host` and its origin in `Origin`: both are checked against the names
 * Plaza is reached by, before anything else reads the request.
 */
import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';

/** What the gateway accepts besides a request without `Origin`. */
export interface OriginPolicy {
  /** Plaza's public base URL: its origin and its host are always accepted. */
  publicBaseUrl: string;
  /** The interface Plaza listens on (HOST): loopback names and pages are accepted when it is reachable there. */
  listenHost: string;
  /** More page origins (`scheme://host[:port]`, lower case), or `*` for any. */
  allowedOrigins: readonly string[];
  /** More Host values (`name[:port]`; a name without port for any port; lower case), or `*` for any. */
  allowedHosts: readonly string[];
}

/** Why a request is refused, or undefined when it may go on. */
export type OriginCheck = (req: Pick<IncomingMessage, 'headers'>) => string | undefined;

/** Whether `hostname` (as URL parses it: IPv6 in brackets) names this machine's loopback interface. */
export function isLoopbackName(hostname: string): boolean {
  const name = hostname.toLowerCase().replace(/^\[|\]$/g, '');
  if (name === 'localhost' || name.endsWith('.localhost')) return true;
  if (isIP(name) === 4) return name.startsWith('127.');
  return name === '::1' || name === '0:0:0:0:0:0:0:1';
}

/** Whether a server listening on `host` can be reached on loopback (a loopback or wildcard address). */
export function listensOnLoopback(host: string): boolean {
  return ['0.0.0.0', '::', '[::]'].includes(host) || isLoopbackName(host);
}

/** A `Host` value as `name[:port]`, lower case, without the port its scheme implies; undefined when it is no host. */
function normalHost(value: string, scheme = 'http:'): URL | undefined {
  if (!URL.canParse(`${scheme}//${value}`)) return undefined;
  const url = new URL(`${scheme}//${value}`);
  // Anything but a bare host (a path, credentials) is no Host header.
  return url.host === value.toLowerCase().replace(/:(80|443)$/, '') || url.host === value.toLowerCase()
    ? url
    : undefined;
}

/** Builds the check of `policy` (see the file's comment). */
export function createOriginCheck(policy: OriginPolicy): OriginCheck {
  const own = new URL(policy.publicBaseUrl);
  const loopback = listensOnLoopback(policy.listenHost);
  const anyOrigin = policy.allowedOrigins.includes('*');
  const anyHost = policy.allowedHosts.includes('*');
  const origins = new Set([own.origin, ...policy.allowedOrigins]);
  const hosts = new Set([own.host, ...policy.allowedHosts]);
  const strip = (host: string) => host.replace(/:(80|443)$/, '');

  const hostAllowed = (url: URL) =>
    anyHost ||
    hosts.has(url.host) ||
    hosts.has(strip(url.host)) ||
    hosts.has(url.hostname) ||
    (loopback && isLoopbackName(url.hostname));

  return (req) => {
    const hostHeader = req.headers.host;
    let host: URL | undefined;
    if (hostHeader !== undefined) {
      host = normalHost(hostHeader);
      if (!host || !hostAllowed(host))
        return `Host ${JSON.stringify(hostHeader.slice(0, 200))} is not a name this Plaza is reached by (PLAZA_GATEWAY_ALLOWED_HOSTS).`;
    }
    const origin = req.headers.origin;
    // Clients outside a browser send none: nothing to check.
    if (origin === undefined || anyOrigin) return undefined;
    const refused = `Origin ${JSON.stringify(origin.slice(0, 200))} may not use this endpoint (PLAZA_GATEWAY_ALLOWED_ORIGINS).`;
    if (!URL.canParse(origin)) return refused;
    const page = new URL(origin);
    if (page.origin === 'null' || !['http:', 'https:'].includes(page.protocol)) return refused;
    if (origins.has(page.origin)) return undefined;
    // A page on this machine, when Plaza is reached on loopback.
    if (loopback && isLoopbackName(page.hostname)) return undefined;
    // A page served under the very name the request was sent to (a name already accepted above).
    if (host && strip(page.host) === strip(host.host)) return undefined;
    return refused;
  };
}
