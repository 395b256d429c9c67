import type { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis } from 'rate-limiter-flexible';

import { RateLimitError } from '../kernel/index.ts';
import type { Logger } from '../log/index.ts';
import { createRateLimiter, type RateLimiter,rateLimitHeaders } from '../rate-limit/index.ts';

/** The chat endpoint's limits. */
export interface ChatLimitSettings {
  rpmPerSubject: number;
  rpmPerIp: number;
  tokensPerDayPerSubject: number;
  tokensPerDayPerIp: number;
}

/** Per-bearer and per-IP limits of the chat endpoint. */
export interface ChatLimits {
  /**
   * Counts one request for `subject` and `ip`; throws RateLimitError (with the longest wait) when
   * a request limit is exceeded or a daily token budget is used up. Returns RateLimit headers.
   */
  admit(subject: string, ip: string): Promise<Record<string, string>>;
  /** Charges `tokens` to both daily budgets (after the answer, when usage is known). */
  spend(subject: string, ip: string, tokens: number): Promise<void>;
}

const DAY_SECONDS = 86_400;

/**
 * Requests per minute use the shared fixed-window limiter (src/rate-limit); tokens per day use
 * rate-limiter-flexible counters charged with the real usage, in Redis when given (atomic across
 * instances), per process otherwise or while Redis is down.
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
      /** Seconds until the budget resets when it is used up, else 0. */
      exhaustedFor: (key: string) => pick(async (l) => {
        const res = await l.get(key);
        return res && res.consumedPoints >= points ? Math.max(1, Math.ceil(res.msBeforeNext / 1000)) : 0;
      }),
      spend: (key: string, tokens: number) => pick((l) => l.penalty(key, tokens)),
    };
  }

  const check = async (limiter: RateLimiter, key: string) => ({ limiter, decision: await limiter.consume(key) });

  return {
    async admit(subject, ip) {
      const [bySubject, byIp, subjectWait, ipWait] = await Promise.all([
        check(perSubject, subject),
        check(perIp, ip),
        budgets.subject.exhaustedFor(subject),
        budgets.ip.exhaustedFor(ip),
      ]);
      for (const { limiter, decision } of [bySubject, byIp]) {
        if (!decision.allowed) {
          throw new RateLimitError(
            `Too many chat requests: at most ${limiter.policy.limit} per minute${limiter === perIp ? ' from one address' : ' per token'}; retry after ${decision.resetSeconds} s.`,
            decision.resetSeconds,
          );
        }
      }
      if (subjectWait > 0) throw new RateLimitError(`Daily token budget of ${budgets.subject.points} tokens used up for this bearer.`, subjectWait);
      if (ipWait > 0) throw new RateLimitError(`Daily token budget of ${budgets.ip.points} tokens used up for this address.`, ipWait);
      return rateLimitHeaders(perSubject.policy, bySubject.decision);
    },

    async spend(subject, ip, tokens) {
      if (tokens <= 0) return;
      await Promise.all([budgets.subject.spend(subject, tokens), budgets.ip.spend(ip, tokens)]);
    },
  };
}
