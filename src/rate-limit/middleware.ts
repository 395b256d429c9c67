import type { NextFunction, Request, Response } from 'express';

import { RateLimitError } from '../kernel/index.ts';
import { clientAddress } from './client-address.ts';
import { rateLimitHeaders } from './headers.ts';
import type { RateLimiter } from './limiter.ts';

/**
 * Express adapter over a RateLimiter: counts the request under the client's address, sets
 * `RateLimit-Policy`/`RateLimit` on every answer, and throws RateLimitError (429 `rate_limited`
 * with `Retry-After`, via the error table) once the limit is exceeded.
 */
export function rateLimit(limiter: RateLimiter, options: { trustProxy: boolean }) {
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    await enforceRateLimit(limiter, clientAddress(req, options.trustProxy), res);
    next();
  };
}

/**
 * What rateLimit does for one request, under any `key` (an account, not only an address): counts
 * it, sets the RateLimit headers on `res`, and throws RateLimitError once the limit is exceeded.
 */
export async function enforceRateLimit(limiter: RateLimiter, key: string, res: Response): Promise<void> {
  const decision = await limiter.consume(key);
  for (const [name, value] of Object.entries(rateLimitHeaders(limiter.policy, decision))) res.setHeader(name, value);
  if (!decision.allowed) {
    throw new RateLimitError(
      `Too many requests: at most ${limiter.policy.limit} per ${limiter.policy.windowSeconds} s; retry after ${decision.resetSeconds} s.`,
      decision.resetSeconds,
    );
  }
}
