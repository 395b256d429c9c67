import type { HostBudget } from '../../probes/index.ts';
import type { RateLimiter } from '../rate-limit/index.ts';

/**
 * The per-host probe bound over a rate limiter (policy `probe-host`: PLAZA_PROBE_HOST_REQUESTS_PER_MIN
 * in one-minute windows), keyed by host name: with Redis, every instance's probes of a host count
 * together; without it (or while Redis is down) each instance counts its own.
 */
export function createProbeHostBudget(limiter: RateLimiter): HostBudget {
  return {
    async take(host) {
      const decision = await limiter.consume(host);
      return { allowed: decision.allowed, retryAfterMs: decision.resetSeconds * 1000 };
    },
  };
}
