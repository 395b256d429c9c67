import type { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis } from 'rate-limiter-flexible';

import { RateLimitError } from '../kernel/index.ts';
import type { Logger } from '../log/index.ts';
import { createRateLimiter, type RateLimiter, rateLimitHeaders } from '../rate-limit/index.ts';

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
  /**
   * Counts one request for `subject` and `ip`, and reserves `reserveTokens` (the most the request
   * may use) in both daily token budgets, so that requests in flight at once cannot together
   * overspend them. Throws RateLimitError (with the longest wait) when a request limit is
   * exceeded or a budget was used up before this request (nothing stays reserved then).
   */
  admit(subject: string, ip: string, reserveTokens: number): Promise<ChatAdmission>;
}

const DAY_SECONDS = 86_400;

/**
 * Requests per minute use the shared fixed-window limiter (src/rate-limit); tokens per day use
 * rate-limiter-flexible counters, in Redis when given (atomic across instances), per process
 * otherwise or while Redis is down. A request reserves the most it may use when it is admitted
 * and settles with its real usage after the answer: charging only afterwards let concurrent
 * requests (on one instance or several) each pass the check and overspend a budget many times.
 */
export function createChatLimits(options: { settings: ChatLimitSettings; redis?: Redis | undefined; keyPrefix: string; log: Logger }): ChatLimits {
  const { settings, redis, keyPrefix, log } = options;
  const perSubject = createRateLimiter({ policy: { name: 'chat', limit: settings.rpmPerSubject, windowSeconds: 60 }, redis, keyPrefix, log });
  const perIp = createRateLimiter({ policy: { name: 'chat-ip', limit: settings.rpmPerIp, windowSeconds: 60 }, redis, keyPrefix, log });
  const budgets = {
    subject: tokenBudget('chat-tokens', settings.tokensPerDayPerSubject),
    ip: tokenBudget('chat-tokens-ip', settings.tokensPerDayPerIp),
  };

  function tokenBudget(name: string, points: number) {
    const opts = { points, duration: DAY_SECONDS, keyPrefix: `${keyPrefix}${name}` };
    const memory = new RateLimiterMemory(opts);
    const shared = redis ? new RateLimiterRedis({ ...opts, storeClient: redis, rejectIfRedisNotReady: true }) : undefined;
    const pick = async <T>(op: (limiter: RateLimiterMemory | RateLimiterRedis) => Promise<T>): Promise<T> => {
      if (shared) {
        try {
          return await op(shared);
        } catch (error) {
          log.warn({ err: error, rate_limit: name }, 'Redis unavailable: token budget counted per instance');
        }
      }
      return op(memory);
    };
    return {
      points,
      /**
       * Adds `tokens` to the key's count and answers the seconds until the window resets when the
       * budget was used up before them (the caller refunds them), else 0. One atomic increment,
       * so concurrent reservations see each other.
       */
      reserve: (key: string, tokens: number) =>
        pick(async (l) => {
          const res = await l.penalty(key, tokens);
          return res.consumedPoints - tokens >= points ? Math.max(1, Math.ceil(res.msBeforeNext / 1000)) : 0;
        }),
      /** Adds (positive) or gives back (negative) tokens. */
      adjust: (key: string, tokens: number) => pick((l) => (tokens > 0 ? l.penalty(key, tokens) : l.reward(key, -tokens))),
    };
  }

  const check = async (limiter: RateLimiter, key: string) => ({ limiter, decision: await limiter.consume(key) });

  return {
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
      const [subjectWait, ipWait] = await Promise.all([budgets.subject.reserve(subject, reserve), budgets.ip.reserve(ip, reserve)]);
      if (subjectWait > 0 || ipWait > 0) {
        await Promise.all([budgets.subject.adjust(subject, -reserve), budgets.ip.adjust(ip, -reserve)]);
        if (subjectWait > 0) throw new RateLimitError(`Daily token budget of ${budgets.subject.points} tokens used up for this bearer.`, subjectWait);
        throw new RateLimitError(`Daily token budget of ${budgets.ip.points} tokens used up for this address.`, ipWait);
      }
      let settled = false;
      return {
        headers: rateLimitHeaders(perSubject.policy, bySubject.decision),
        async settle(tokens) {
          if (settled) return;
          settled = true;
          const difference = Math.max(0, Math.ceil(tokens)) - reserve;
          if (difference !== 0) await Promise.all([budgets.subject.adjust(subject, difference), budgets.ip.adjust(ip, difference)]);
        },
      };
    },
  };
}
