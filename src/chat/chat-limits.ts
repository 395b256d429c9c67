import type { Redis } from 'ioredis';
import { RateLimiterRedis } from 'rate-limiter-flexible';

import { RateLimitError } from '../kernel/index.ts';
import type { Logger } from '../log/index.ts';
import {
  type CounterState,
  createRateLimiter,
  MemoryCounters,
  type RateLimiter,
  rateLimitHeaders,
} from '../rate-limit/index.ts';

/** The chat endpoint's limits. */
export interface ChatLimitSettings {
  rpmPerSubject: number;
  rpmPerIp: number;
  tokensPerDayPerSubject: number;
  tokensPerDayPerIp: number;
}

/** An admitted request: its RateLimit headers, and how its reservation is settled. */
export interface ChatAdmission {
  headers: Record<string, string>;
  /**
   * Settles the tokens reserved at admission against what the request really used (`tokens`;
   * 0 refunds the reservation, as for a request that failed before any usage). Call once.
   */
  settle(tokens: number): Promise<void>;
}

/** Per-bearer and per-IP limits of the chat endpoint. */
export interface ChatLimits {
  /** The most one request may reserve: the smaller daily token budget (a request above it could never fit). */
  readonly largestReservation: number;
  /**
   * Counts one request for `subject` and `ip`, and reserves `reserveTokens` (the most the request
   * may use) in both daily token budgets, so that requests in flight at once cannot together
   * overspend them. Throws RateLimitError (with the longest wait) when a request limit is
   * exceeded or a budget was used up before this request (nothing stays reserved then).
   */
  admit(subject: string, ip: string, reserveTokens: number): Promise<ChatAdmission>;
}

const DAY_SECONDS = 86_400;
/** Retry-After when a budget is full only of reservations of running requests. */
const HELD_RETRY_SECONDS = 5;
/**
 * How long a shared count of reservations outlives its last reservation: longer than a completion
 * may run, so an instance that died mid-request leaves no reservation counted for long.
 */
const HELD_TTL_SECONDS = 15 * 60;

/**
 * Requests per minute use the shared fixed-window limiter (src/rate-limit); tokens per day use
 * rate-limiter-flexible counters, in Redis when given (atomic across instances), per process
 * otherwise or while Redis is down. A request reserves the most it may use when it is admitted
 * and settles with its real usage after the answer: charging only afterwards let concurrent
 * requests (on one instance or several) each pass the check and overspend a budget many times.
 */
export function createChatLimits(options: {
  settings: ChatLimitSettings;
  redis?: Redis | undefined;
  keyPrefix: string;
  log: Logger;
}): ChatLimits {
  const { settings, redis, keyPrefix, log } = options;
  const perSubject = createRateLimiter({
    policy: { name: 'chat', limit: settings.rpmPerSubject, windowSeconds: 60 },
    redis,
    keyPrefix,
    log,
  });
  const perIp = createRateLimiter({
    policy: { name: 'chat-ip', limit: settings.rpmPerIp, windowSeconds: 60 },
    redis,
    keyPrefix,
    log,
  });
  const budgets = {
    subject: tokenBudget('chat-tokens', settings.tokensPerDayPerSubject),
    ip: tokenBudget('chat-tokens-ip', settings.tokensPerDayPerIp),
  };

  function tokenBudget(name: string, points: number) {
    const opts = { points, duration: DAY_SECONDS, keyPrefix: `${keyPrefix}${name}` };
    const memory = new MemoryCounters({ points, durationSeconds: DAY_SECONDS });
    const shared = redis
      ? new RateLimiterRedis({ ...opts, storeClient: redis, rejectIfRedisNotReady: true })
      : undefined;
    /** This instance's reservations not settled yet, per key. */
    const held = new Map<string, number>();
    /**
     * With Redis, every instance's reservations not settled yet, per key: a request another
     * instance's running requests hold the budget against is told to retry shortly, not that the
     * budget is used up. Sent without waiting (ioredis keeps a connection's commands in order).
     */
    const heldKey = (key: string) => `${keyPrefix}${name}:held:${key}`;
    const holdShared = (key: string, tokens: number) => {
      if (!redis) return;
      const update =
        tokens > 0
          ? redis.multi().incrby(heldKey(key), tokens).expire(heldKey(key), HELD_TTL_SECONDS).exec()
          : redis.decrby(heldKey(key), -tokens);
      update.catch((error: unknown) =>
        log.debug({ err: error, rate_limit: name }, 'could not count a held reservation'),
      );
    };
    const heldEverywhere = async (key: string): Promise<number> => {
      try {
        return Math.max(0, Number(await redis!.get(heldKey(key))) || 0);
      } catch {
        return held.get(key) ?? 0;
      }
    };
    /** Redis failed the last reservation: said once per outage, not on every request. */
    let degraded = false;
    const hold = (key: string, tokens: number) => {
      const total = (held.get(key) ?? 0) + tokens;
      if (total > 0) held.set(key, total);
      else held.delete(key);
    };
    return {
      points,
      /**
       * Adds `tokens` to the key's count (one atomic increment, so concurrent reservations see
       * each other) and answers the store that took them, which settles them too, and the seconds
       * to wait when the budget was used up before them (they are given back then), else 0. When
       * only requests still running (on any instance, with Redis) hold what is missing, the wait is short.
       */
      async reserve(
        key: string,
        tokens: number,
      ): Promise<{ wait: number; held: boolean; store: MemoryCounters | RateLimiterRedis }> {
        let store: MemoryCounters | RateLimiterRedis = shared ?? memory;
        let res: CounterState;
        try {
          res = await store.penalty(key, tokens);
          if (store === shared && degraded) {
            degraded = false;
            log.info({ rate_limit: name }, 'Redis is back: token budget shared again');
          }
        } catch (error) {
          if (store === memory) throw error;
          if (!degraded) {
            degraded = true;
            log.warn({ err: error, rate_limit: name }, 'Redis unavailable: token budget counted per instance');
          }
          store = memory;
          res = memory.penalty(key, tokens);
        }
        const before = res.consumedPoints - tokens;
        if (before < points) {
          hold(key, tokens);
          if (store === shared) holdShared(key, tokens);
          return { wait: 0, held: false, store };
        }
        await Promise.resolve(store.reward(key, tokens)).catch((error: unknown) =>
          log.warn({ err: error, rate_limit: name }, 'could not give back a refused reservation'),
        );
        const heldNow = store === shared ? await heldEverywhere(key) : (held.get(key) ?? 0);
        const onlyHeld = heldNow > 0 && before - heldNow < points;
        return {
          wait: onlyHeld ? HELD_RETRY_SECONDS : Math.max(1, Math.ceil(res.msBeforeNext / 1000)),
          held: onlyHeld,
          store,
        };
      },
      /** Settles a reservation of `reserved` on the store that took it, with what was used. */
      async settle(
        store: MemoryCounters | RateLimiterRedis,
        key: string,
        reserved: number,
        used: number,
      ): Promise<void> {
        hold(key, -reserved);
        if (store === shared) holdShared(key, -reserved);
        const difference = used - reserved;
        if (difference === 0) return;
        // Never on the other store: a refund there would leave the reservation standing here.
        if (store instanceof MemoryCounters) {
          store.add(key, difference);
          return;
        }
        await (difference > 0 ? store.penalty(key, difference) : store.reward(key, -difference)).catch(
          (error: unknown) =>
            log.warn({ err: error, rate_limit: name, tokens: difference }, 'could not settle a token reservation'),
        );
      },
    };
  }

  const check = async (limiter: RateLimiter, key: string) => ({ limiter, decision: await limiter.consume(key) });

  return {
    largestReservation: Math.min(settings.tokensPerDayPerSubject, settings.tokensPerDayPerIp),

    async admit(subject, ip, reserveTokens) {
      const reserve = Math.max(1, Math.ceil(reserveTokens));
      const [bySubject, byIp] = await Promise.all([check(perSubject, subject), check(perIp, ip)]);
      for (const { limiter, decision } of [bySubject, byIp]) {
        if (!decision.allowed) {
          throw new RateLimitError(
            `Too many chat requests: at most ${limiter.policy.limit} per minute${limiter === perIp ? ' from one address' : ' per token'}; retry after ${decision.resetSeconds} s.`,
            decision.resetSeconds,
          );
        }
      }
      const [bySubjectBudget, byIpBudget] = await Promise.all([
        budgets.subject.reserve(subject, reserve),
        budgets.ip.reserve(ip, reserve),
      ]);
      const settleBoth = (used: number) =>
        Promise.all([
          bySubjectBudget.wait === 0
            ? budgets.subject.settle(bySubjectBudget.store, subject, reserve, used)
            : undefined,
          byIpBudget.wait === 0 ? budgets.ip.settle(byIpBudget.store, ip, reserve, used) : undefined,
        ]).then(() => undefined);
      if (bySubjectBudget.wait > 0 || byIpBudget.wait > 0) {
        await settleBoth(0);
        const refused = bySubjectBudget.wait > 0 ? bySubjectBudget : byIpBudget;
        const [wait, what, points] = [
          refused.wait,
          refused === bySubjectBudget ? 'this bearer' : 'this address',
          refused === bySubjectBudget ? budgets.subject.points : budgets.ip.points,
        ];
        const reason = refused.held
          ? `Daily token budget of ${points} tokens for ${what} is held by requests still running; retry after ${wait} s.`
          : `Daily token budget of ${points} tokens used up for ${what}.`;
        throw new RateLimitError(reason, wait);
      }
      let settled = false;
      return {
        headers: rateLimitHeaders(perSubject.policy, bySubject.decision),
        async settle(tokens) {
          if (settled) return;
          settled = true;
          await settleBoth(Math.max(0, Math.ceil(tokens)));
        },
      };
    },
  };
}
