/**
 * Pins the chat endpoint's daily token budgets (src/chat/chat-limits.ts): a request reserves what
 * it may use when admitted and settles with what it used, on the store that took the reservation
 * even when Redis comes or goes in between; a budget full only of running requests (this
 * instance's, or with Redis any instance's) is refused with a short wait, one used up with the wait
 * until it resets.
 */
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';

import { createChatLimits } from '../../src/chat/index.ts';
import { randomToken, RateLimitError } from '../../src/kernel/index.ts';
import { createLogger } from '../../src/log/index.ts';
import { freePort } from '../support/cli.ts';

const REDIS_URL = process.env['TEST_REDIS_URL'];
const log = createLogger({ level: 'silent' });
const settings = (tokensPerDay: number) => ({
  rpmPerSubject: 1000,
  rpmPerIp: 1000,
  tokensPerDayPerSubject: tokensPerDay,
  tokensPerDayPerIp: 1_000_000,
});

async function refusal(promise: Promise<unknown>): Promise<RateLimitError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(RateLimitError);
  return error as RateLimitError;
}

describe('chat token budgets', () => {
  it('refuses with a short wait while only running requests hold the budget, and admits again once they settle', async () => {
    const limits = createChatLimits({ settings: settings(8000), keyPrefix: `t:${randomToken(6)}:`, log });
    const first = await limits.admit('alice', '10.0.0.1', 4100);
    const second = await limits.admit('alice', '10.0.0.1', 4100);
    const held = await refusal(limits.admit('alice', '10.0.0.1', 4100));
    expect(held.retryAfterSeconds).toBe(5);
    expect(held.message).toMatch(/held by requests still running/);
    await first.settle(20);
    await second.settle(20);
    const third = await limits.admit('alice', '10.0.0.1', 4100);
    await third.settle(8000);
    // Now really used up: the wait runs to the end of the day's window.
    const spent = await refusal(limits.admit('alice', '10.0.0.1', 10));
    expect(spent.retryAfterSeconds).toBeGreaterThan(3600);
    expect(spent.message).toMatch(/used up/);
  });

  it('says once, not on every request, that Redis is unreachable and budgets are counted per instance', async () => {
    const lines: string[] = [];
    const logged = createLogger({ level: 'info', destination: { write: (line: string) => void lines.push(line) } });
    // Nothing listens there: every Redis command fails at once.
    const redis = new Redis(`redis://127.0.0.1:${await freePort()}`, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      retryStrategy: () => 1_000,
    });
    redis.on('error', () => undefined);
    try {
      const limits = createChatLimits({
        settings: settings(100_000),
        redis,
        keyPrefix: `t:${randomToken(6)}:`,
        log: logged,
      });
      for (let i = 0; i < 5; i++) await (await limits.admit('carol', '10.0.0.3', 100)).settle(10);
      const budgetWarnings = lines.filter((line) => line.includes('token budget counted per instance'));
      // One per budget (per bearer, per address) for the whole outage.
      expect(budgetWarnings).toHaveLength(2);
    } finally {
      redis.disconnect();
    }
  });

  describe.runIf(REDIS_URL)('with Redis', () => {
    const clients: Redis[] = [];
    afterAll(async () => {
      await Promise.all(clients.map((c) => c.quit().catch(() => undefined)));
    });

    it('settles a reservation on the store that took it when Redis comes up in between', async () => {
      const prefix = `t:${randomToken(6)}:`;
      // Not connected yet: the reservation goes to the instance's own counter.
      const redis = new Redis(REDIS_URL!, { lazyConnect: true });
      clients.push(redis);
      const limits = createChatLimits({ settings: settings(10_000), redis, keyPrefix: prefix, log });
      const admitted = await limits.admit('bob', '10.0.0.2', 4096);
      await redis.connect();
      await admitted.settle(10);
      // Nothing was reserved in Redis, so nothing may be given back there.
      const shared = await redis.get(`${prefix}chat-tokens:bob`);
      expect(shared === null || Number(shared) >= 0, `shared counter ${shared}`).toBe(true);
      // A later reservation counts in Redis from zero: 14,000 does not fit a 10,000 budget twice.
      const big = await limits.admit('bob', '10.0.0.2', 14_000);
      await refusal(limits.admit('bob', '10.0.0.2', 14_000));
      await big.settle(0);
      expect(Number(await redis.get(`${prefix}chat-tokens:bob`))).toBe(0);
    });

    it("tells a request held up by another instance's running requests to retry shortly, not that the budget is used up", async () => {
      const prefix = `t:${randomToken(6)}:`;
      const [a, b] = [new Redis(REDIS_URL!), new Redis(REDIS_URL!)];
      clients.push(a, b);
      // Two instances sharing one Redis.
      const [onA, onB] = [a, b].map((redis) =>
        createChatLimits({ settings: settings(2000), redis, keyPrefix: prefix, log }),
      );
      // A request is admitted while the budget was not used up before it: three fill it (2700 > 2000).
      const running = await Promise.all([1, 2, 3].map(() => onA!.admit('dana', '10.0.0.4', 900)));
      const held = await refusal(onB!.admit('dana', '10.0.0.4', 900));
      expect(held.retryAfterSeconds).toBe(5);
      expect(held.message).toMatch(/held by requests still running/);
      // Once they settle with what they used, the other instance admits again.
      await Promise.all(running.map((r) => r.settle(12)));
      await expect.poll(async () => Number(await b.get(`${prefix}chat-tokens:held:dana`))).toBe(0);
      const admitted = await onB!.admit('dana', '10.0.0.4', 900);
      await admitted.settle(1000);
      // Used up for real (36 + 1000 + 1000 > 2000): the wait runs to the end of the day's window, on either instance.
      await (await onA!.admit('dana', '10.0.0.4', 900)).settle(1000);
      const spent = await refusal(onB!.admit('dana', '10.0.0.4', 10));
      expect(spent.retryAfterSeconds).toBeGreaterThan(3600);
      expect(spent.message).toMatch(/used up/);
    });
  });
});
