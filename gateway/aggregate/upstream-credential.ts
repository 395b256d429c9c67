/** The caller's third-party credential on `/mcp`: sent once, and only for the one provider it names. */
import type { IncomingMessage } from 'node:http';

import { UPSTREAM_AUTHORIZATION_HEADER, UPSTREAM_PROVIDER_HEADER } from '../identity/stamp.ts';

const PROVIDER_SLUG = /^[a-z0-9][a-z0-9-]{1,62}$/;

/** Whether the caller sent a credential for a provider (X-PLATFORM-Upstream-Authorization). */
export function hasUpstreamCredential(req: IncomingMessage): boolean {
  const value = req.headers[UPSTREAM_AUTHORIZATION_HEADER];
  return typeof value === 'string' && value.trim() !== '';
}

/** The provider slug the caller's credential is for, when it named a valid one. */
export function upstreamProviderOf(req: IncomingMessage): string | undefined {
  const value = req.headers[UPSTREAM_PROVIDER_HEADER];
  const slug = typeof value === 'string' ? value.trim() : undefined;
  return slug !== undefined && PROVIDER_SLUG.test(slug) ? slug : undefined;
}
