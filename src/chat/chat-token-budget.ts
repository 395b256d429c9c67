/**
 * One daily token budget of the chat endpoint (per bearer or per IP): reservations taken when a
 * request is admitted and settled with its real usage, counted in Redis when given and per
 * process otherwise or while Redis is down. Apart from chat-limits.ts, which admits a request
 * against two of these and the per-minute limiters.
 */
import type { Redis } from 'ioredis';
import { RateLimiterRedis } from 'rate-limiter-flexible';

import type { Logger } from '../log/index.ts';
import { type CounterState, MemoryCounters } from '../rate-limit/index.ts';

const DAY_SECONDS = 86_400;
/** Retry-After when a budget is full only of reservations of running requests. */
const HELD_RETRY_SECONDS = 5;
/**
 * How long a shared count of reservations outlives its last reservation: longer than a completion
 * may run, so an instance that died mid-request leaves no reservation counted for long.
 */
const HELD_TTL_SECONDS = 15 * 60;

/** The counter store a reservation was taken on (the shared one, or this process's). */
export type BudgetStore = MemoryCounters | RateLimiterRedis;

/** See {@link createTokenBudget}. */
export interface TokenBudget {
  /** The budget: tokens per day. */
  readonly points: number;
  /**
   * Adds `tokens` to the key's count (one atomic increment, so concurrent reservations see
   * each other) and answers the store that took them, which settles them too, and the seconds
   * to wait when the budget was used up before them (they are given back then), else 0. When
   * only requests still running (on any instance, with Redis) hold what is missing, the wait is short.
   */
  reserve(key: string, tokens: number): Promise<{ wait: number; held: boolean; store: BudgetStore }>;
  /** Settles a reservation of `reserved` on the store that took it, with what was used. */
  settle(store: BudgetStore, key: string, reserved: number, used: number): Promise<void>;
}

/** Creates the budget `name` of `points` tokens a day; its keys are under `keyPrefix`. */
export function createTokenBudget(options: {
  name: string;
  points: number;
  redis: Redis | undefined;
  keyPrefix: string;
  log: Logger;
}): TokenBudget {
  const { name, points, redis, keyPrefix, log } = options;
  const opts = { points, duration: DAY_SECONDS, keyPrefix: `${keyPrefix}${name}` };
  const memory = new MemoryCounters({ points, durationSeconds: DAY_SECONDS });
  const shared = redis ? new RateLimiterRedis({ ...opts, storeClient: redis, rejectIfRedisNotReady: true }) : undefined;
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
    update.catch((error: unknown) => log.debug({ err: error, rate_limit: name }, 'could not count a held reservation'));
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
    async reserve(key: string, tokens: number): Promise<{ wait: number; held: boolean; store: BudgetStore }> {
      let store: BudgetStore = shared ?? memory;
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
    async settle(store: BudgetStore, key: string, reserved: number, used: number): Promise<void> {
      hold(key, -reserved);
      if (store === shared) holdShared(key, -reserved);
      const difference = used - reserved;
      if (difference === 0) return;
      // Never on the other store: a refund there would leave the reservation standing here.
      if (store instanceof MemoryCounters) {
        store.add(key, difference);
        return;
      }
      await (difference > 0 ? store.penalty(key, difference) : store.reward(key, -difference)).catch((error: unknown) =>
        log.warn({ err: error, rate_limit: name, tokens: difference }, 'could not settle a token reservation'),
      );
    },
  };
}
