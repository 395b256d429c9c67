import type { Redis } from 'ioredis';
import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';

import type { Logger } from '../log/index.ts';
import { type CounterState, MemoryCounters } from './memory-counters.ts';

const STARTUP_WAIT_MS = 1_000;

// One wait per client, shared by every limiter built on it: a listener set per limiter passed
// the emitter's limit of ten at start-up (a MaxListenersExceededWarning on every start with Redis).
const settling = new WeakMap<Redis, Promise<void>>();

/** Resolves once `redis` is ready, has failed, or `ms` passed, whichever comes first. */
function settled(redis: Redis, ms: number): Promise<void> {
  if (redis.status === 'ready') return Promise.resolve();
  let waiting = settling.get(redis);
  if (!waiting) {
    waiting = waitForRedis(redis, ms).finally(() => settling.delete(redis));
    settling.set(redis, waiting);
  }
  return waiting;
}

function waitForRedis(redis: Redis, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      redis.off('ready', done);
      redis.off('error', done);
      redis.off('end', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    timer.unref();
    redis.once('ready', done);
    redis.once('error', done);
    redis.once('end', done);
  });
}

/** A named limit: at most `limit` requests per client in each fixed window of `windowSeconds`. */
export interface RateLimitPolicy {
  /** Short name, used in keys and in the `RateLimit-Policy` header (e.g. `intent`). */
  name: string;
  limit: number;
  windowSeconds: number;
}

/** The outcome of counting one request. */
export interface RateLimitDecision {
  allowed: boolean;
  limit: number;
  /** Requests left in the current window (0 once exceeded). */
  remaining: number;
  /** Seconds until the current window ends (at least 1). */
  resetSeconds: number;
  /** Where the count was kept: the shared store, or this process (no Redis, or Redis is down). */
  store: 'redis' | 'memory';
}

/** Counts requests per client key; framework-free so the gateway and token API can reuse it. */
export interface RateLimiter {
  readonly policy: RateLimitPolicy;
  /** Counts one request by `clientKey` and says whether it is within the limit. Never throws. */
  consume(clientKey: string): Promise<RateLimitDecision>;
}

/** What a limiter is built from. */
export interface RateLimiterOptions {
  policy: RateLimitPolicy;
  /** Shared counters (atomic Lua increment) when given; otherwise counts live in this process. */
  redis?: Redis | undefined;
  /** Prefix of every Redis key, so instances of one deployment share counts and tests stay apart. */
  keyPrefix: string;
  log: Logger;
}

/**
 * Creates a fixed-window limiter (rate-limiter-flexible). With Redis, every instance counts in one
 * key per client and window, incremented atomically by a Lua script; if Redis fails, the request is
 * counted locally instead (a logged warning, once per outage) so the limit still holds per instance
 * and the site stays up. Throws on a nonsensical policy at creation.
 */
export function createRateLimiter(options: RateLimiterOptions): RateLimiter {
  const { policy, redis, log } = options;
  if (!Number.isInteger(policy.limit) || policy.limit < 1)
    throw new Error(`rate limit ${policy.name}: limit must be a positive integer`);
  if (!Number.isInteger(policy.windowSeconds) || policy.windowSeconds < 1) {
    throw new Error(`rate limit ${policy.name}: windowSeconds must be a positive integer`);
  }
  const keyPrefix = `${options.keyPrefix}${policy.name}`;
  const memory = new MemoryCounters({ points: policy.limit, durationSeconds: policy.windowSeconds });
  const shared = redis
    ? new RateLimiterRedis({
        storeClient: redis,
        points: policy.limit,
        duration: policy.windowSeconds,
        keyPrefix,
        rejectIfRedisNotReady: true,
      })
    : undefined;
  let degraded = false;
  // The first requests after start-up wait (briefly) for the connection instead of being counted
  // locally and logging a spurious outage.
  const connected = redis ? settled(redis, STARTUP_WAIT_MS) : undefined;

  const decide = (res: CounterState, allowed: boolean, store: RateLimitDecision['store']): RateLimitDecision => ({
    allowed,
    limit: policy.limit,
    remaining: allowed ? Math.max(0, res.remainingPoints) : 0,
    resetSeconds: Math.max(1, Math.ceil(res.msBeforeNext / 1000)),
    store,
  });

  const consumeShared = async (limiter: RateLimiterRedis, key: string) => {
    try {
      return decide(await limiter.consume(key), true, 'redis');
    } catch (rejection) {
      if (rejection instanceof RateLimiterRes) return decide(rejection, false, 'redis');
      throw rejection;
    }
  };
  const consumeLocal = (key: string) => {
    const res = memory.add(key, 1);
    return decide(res, res.consumedPoints <= policy.limit, 'memory');
  };

  return {
    policy,
    async consume(clientKey) {
      if (shared) {
        await connected;
        try {
          const decision = await consumeShared(shared, clientKey);
          if (degraded) {
            degraded = false;
            log.info({ rate_limit: policy.name }, 'Redis is back: rate limits are shared again');
          }
          return decision;
        } catch (error) {
          if (!degraded) {
            degraded = true;
            log.warn(
              { rate_limit: policy.name, err: error },
              'Redis unavailable: rate limits fall back to per-instance counts',
            );
          }
        }
      }
      return consumeLocal(clientKey);
    },
  };
}
