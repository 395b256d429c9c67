/**
 * Gateway messages between instances over Redis (src/app/shared-calls.ts): a cancellation reaches
 * the instance relaying the call, and a client's answer (with its payload) the instance waiting for
 * it, each under its own key only. Runs when TEST_REDIS_URL is set.
 */
import { randomBytes } from 'node:crypto';

import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createRedisSharedCalls, type RedisSharedCalls } from '../../src/app/shared-calls.ts';
import { createLogger } from '../../src/log/index.ts';

const REDIS = process.env['TEST_REDIS_URL'];

describe.skipIf(!REDIS)('shared calls over Redis', () => {
  let redis: Redis;
  let one: RedisSharedCalls;
  let two: RedisSharedCalls;

  beforeAll(async () => {
    redis = new Redis(REDIS!);
    const log = createLogger({ level: 'silent' });
    const keyPrefix = `shared-${randomBytes(6).toString('hex')}:`;
    one = createRedisSharedCalls({ redis, keyPrefix, log });
    two = createRedisSharedCalls({ redis, keyPrefix, log });
    // Both subscribers ready before anything is published.
    for (let i = 0; i < 200; i++) {
      const [, count] = (await redis.pubsub('NUMSUB', `${keyPrefix}gateway-answer`)) as [string, number];
      if (count >= 2) break;
      await new Promise((r) => setTimeout(r, 10));
    }
  });
  afterAll(async () => {
    await one?.close();
    await two?.close();
    await redis?.quit();
  });

  it("hands a client's answer to the instance waiting under its key, and to no other key", async () => {
    const got: string[] = [];
    const other: string[] = [];
    const unlisten = one.listen!('key-a', (payload) => got.push(payload));
    const unlistenOther = one.listen!('key-b', (payload) => other.push(payload));
    two.deliver!('key-a', '{"result":{"action":"accept"}}');
    for (let i = 0; i < 200 && got.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(got).toEqual(['{"result":{"action":"accept"}}']);
    expect(other).toEqual([]);
    unlisten();
    unlistenOther();
  });

  it('still passes cancellations, on their own channel', async () => {
    let cancelled = 0;
    const release = one.add('call-1', () => cancelled++);
    two.cancel('call-1');
    for (let i = 0; i < 200 && cancelled === 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(cancelled).toBe(1);
    release();
  });
});
