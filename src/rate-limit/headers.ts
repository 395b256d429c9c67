import type { RateLimitDecision, RateLimitPolicy } from './limiter.ts';

/**
 * The IETF RateLimit header fields (draft-ietf-httpapi-ratelimit-headers, structured-field form):
 * `RateLimit-Policy: "intent";q=30;w=60` and `RateLimit: "intent";r=29;t=41`.
 */
export function rateLimitHeaders(policy: RateLimitPolicy, decision: RateLimitDecision): Record<string, string> {
  const name = JSON.stringify(policy.name);
  return {
    'RateLimit-Policy': `${name};q=${policy.limit};w=${policy.windowSeconds}`,
    RateLimit: `${name};r=${decision.remaining};t=${decision.resetSeconds}`,
  };
}
