import type { Redis } from 'ioredis';

import { RateLimitError } from '../kernel/index.ts';
import type { Logger } from '../log/index.ts';
import { createRateLimiter, type RateLimiter, rateLimitHeaders } from '../rate-limit/index.ts';
import { createTokenBudget } from './chat-token-budget.ts';

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
    subject: createTokenBudget({ name: 'chat-tokens', points: settings.tokensPerDayPerSubject, redis, keyPrefix, log }),
    ip: createTokenBudget({ name: 'chat-tokens-ip', points: settings.tokensPerDayPerIp, redis, keyPrefix, log }),
  };

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
