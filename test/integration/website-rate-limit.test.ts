/**
 * Pins the per-client rate limits of POST /api/agent/intent and POST /api/leads (spec §8): 429
 * `rate_limited` with Retry-After and the IETF RateLimit headers on one instance, separate budgets
 * per route and per client (X-Forwarded-For only behind a trusted proxy), one shared limit across
 * two instances through Redis (TEST_REDIS_URL), and local limits when Redis is down.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { randomToken } from '../../src/kernel/index.ts';
import { BACKENDS, createTestDatabase, type TestDatabase } from '../support/databases.ts';
import { startTestPlaza, type TestPlaza } from '../support/plaza.ts';

const REDIS = process.env['TEST_REDIS_URL'];

function intent(plaza: TestPlaza, headers: Record<string, string> = {}) {
  return fetch(`${plaza.url}/api/agent/intent`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ prompt: 'audit our agents' }),
  });
}

describe.each(BACKENDS)('website rate limits on %s', (backend) => {
  // One database for every instance of this file: creating databases is the slow part.
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase(backend);
  });
  afterAll(async () => {
    await database?.dispose();
  });

  describe('one instance', () => {
    let plaza: TestPlaza;
    beforeAll(async () => {
      plaza = await startTestPlaza(backend, {
        db: database.db,
        env: { PLAZA_RATE_LIMIT_INTENT_PER_MIN: '3', PLAZA_RATE_LIMIT_LEADS_PER_MIN: '2' },
      });
    });
    afterAll(async () => {
      await plaza?.close();
    });

    it('answers 429 rate_limited with Retry-After and RateLimit headers past the limit', async () => {
      const remaining = [];
      for (let i = 0; i < 3; i++) {
        const res = await intent(plaza);
        expect(res.status).toBe(200);
        expect(res.headers.get('ratelimit-policy')).toBe('"intent";q=3;w=60');
        remaining.push(res.headers.get('ratelimit'));
      }
      expect(remaining.map((h) => /r=(\d+)/.exec(h!)?.[1])).toEqual(['2', '1', '0']);
      const limited = await intent(plaza);
      expect(limited.status).toBe(429);
      const retryAfter = Number(limited.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(60);
      expect(limited.headers.get('ratelimit')).toMatch(/^"intent";r=0;t=\d+$/);
      const body: any = await limited.json();
      expect(body).toMatchObject({
        success: false,
        code: 'rate_limited',
        request_id: limited.headers.get('x-request-id'),
      });
    });

    it('keeps a separate budget for leads, and ignores X-Forwarded-For without a trusted proxy', async () => {
      const spoofed = await intent(plaza, { 'x-forwarded-for': '198.51.100.77' });
      expect(spoofed.status).toBe(429);
      const lead = (email: string) =>
        fetch(`${plaza.url}/api/leads`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ email, scenario: 'developer' }),
        });
      expect((await lead('a@example.com')).status).toBe(201);
      expect((await lead('b@example.com')).status).toBe(201);
      const limited = await lead('c@example.com');
      expect(limited.status).toBe(429);
      expect(limited.headers.get('ratelimit-policy')).toBe('"leads";q=2;w=60');
      expect(await plaza.db.prisma.lead.count()).toBe(2);
    });
  });

  describe('behind a trusted proxy', () => {
    let plaza: TestPlaza;
    beforeAll(async () => {
      plaza = await startTestPlaza(backend, {
        db: database.db,
        env: { PLAZA_RATE_LIMIT_INTENT_PER_MIN: '1', PLAZA_TRUST_PROXY: 'true' },
      });
    });
    afterAll(async () => {
      await plaza?.close();
    });

    it('limits each forwarded client separately', async () => {
      expect((await intent(plaza, { 'x-forwarded-for': '203.0.113.1' })).status).toBe(200);
      expect((await intent(plaza, { 'x-forwarded-for': '203.0.113.1' })).status).toBe(429);
      expect((await intent(plaza, { 'x-forwarded-for': '203.0.113.2' })).status).toBe(200);
    });

    it('takes the address the proxy appended, not what the client put before it', async () => {
      // A client sends its own X-Forwarded-For; the proxy appends the address it saw.
      expect((await intent(plaza, { 'x-forwarded-for': '203.0.113.3' })).status).toBe(200);
      expect((await intent(plaza, { 'x-forwarded-for': '198.51.100.7, 203.0.113.3' })).status).toBe(429);
      expect((await intent(plaza, { 'x-forwarded-for': '198.51.100.8, 203.0.113.3' })).status).toBe(429);
    });
  });

  describe('Redis down', () => {
    let plaza: TestPlaza;
    beforeAll(async () => {
      // Nothing listens on port 1: the limiter must fall back to this instance's own counts.
      plaza = await startTestPlaza(backend, {
        db: database.db,
        env: { REDIS_URL: 'redis://127.0.0.1:1', PLAZA_RATE_LIMIT_INTENT_PER_MIN: '2' },
      });
    });
    afterAll(async () => {
      await plaza?.close();
    });

    it('keeps serving with local limits and logs a warning', async () => {
      expect((await intent(plaza)).status).toBe(200);
      expect((await intent(plaza)).status).toBe(200);
      expect((await intent(plaza)).status).toBe(429);
      expect(plaza.logLines().some((line) => line.includes('rate limits fall back to per-instance counts'))).toBe(true);
    });
  });

  describe.skipIf(!REDIS)('two instances sharing Redis', () => {
    let a: TestPlaza;
    let b: TestPlaza;
    beforeAll(async () => {
      // A loaded CI machine can hold a Redis answer past the 500 ms default, and this test is about
      // sharing the count, not about falling back: Redis gets room to answer.
      const env = {
        REDIS_URL: REDIS!,
        REDIS_COMMAND_TIMEOUT_MS: '10000',
        PLAZA_RATE_LIMIT_KEY_PREFIX: `plaza-test:${randomToken(8)}:`,
        PLAZA_RATE_LIMIT_INTENT_PER_MIN: '4',
      };
      a = await startTestPlaza(backend, { env, db: database.db });
      b = await startTestPlaza(backend, { env, db: database.db });
    });
    afterAll(async () => {
      await b?.close();
      await a?.close();
    });

    it('enforces one limit across both instances', async () => {
      const statuses = [];
      for (const instance of [a, b, a, b, a, b]) statuses.push((await intent(instance)).status);
      expect(statuses).toEqual([200, 200, 200, 200, 429, 429]);
      const last = await intent(b);
      expect(last.headers.get('ratelimit')).toMatch(/^"intent";r=0;t=\d+$/);
      expect(a.logLines().some((line) => line.includes('fall back'))).toBe(false);
    });
  });
});
