/**
 * Per-client rate limits: a framework-free fixed-window limiter (in memory, or shared through
 * Redis with a local fallback), the IETF RateLimit headers, and a thin Express adapter.
 */
export type { ClientAddressSource } from './client-address.ts';
export { clientAddress } from './client-address.ts';
export { rateLimitHeaders } from './headers.ts';
export type { RateLimitDecision, RateLimiter, RateLimiterOptions, RateLimitPolicy } from './limiter.ts';
export { createRateLimiter } from './limiter.ts';
export type { CounterState } from './memory-counters.ts';
export { MemoryCounters } from './memory-counters.ts';
export { enforceRateLimit, rateLimit } from './middleware.ts';
export { createRedisClient } from './redis-client.ts';
