/**
 * Pins the limit on MCP listing writes (issue 31, item 4): every POST/PATCH/DELETE of
 * /api/mcp/listings counts against its client address, and one made with an account's API key
 * also against that account; past either, 429 `rate_limited` with Retry-After and the RateLimit
 * headers, and nothing is stored. With Redis (TEST_REDIS_URL) two instances share one count.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createAccountService } from '../../src/accounts/index.ts';
import { randomToken, systemClock } from '../../src/kernel/index.ts';
import { BACKENDS, createTestDatabase, type TestDatabase } from '../support/databases.ts';
import { startTestPlaza, type TestPlaza } from '../support/plaza.ts';

const REDIS = process.env['TEST_REDIS_URL'];
const ENV = {
  PLAZA_ALLOW_PRIVATE_TARGETS: '1',
  PLAZA_BACKGROUND: '0',
  MCP_REGISTRY_URL: '',
  PLAZA_RATE_LIMIT_LISTINGS_PER_MIN: '3',
};

let serial = 0;
/** A listing of its own URL and slug (port 9: its first probe fails at once, which is fine here). */
const listing = () => {
  serial += 1;
  return {
    provider: `fanout-${serial}-${randomToken(4).toLowerCase()}`,
    url: `http://127.0.0.1:9/mcp/${serial}-${randomToken(4)}`,
    registered_by: 'x@example.com',
    summary: 'A listing.',
  };
};

function post(plaza: TestPlaza, body: unknown, headers: Record<string, string> = {}) {
  return fetch(`${plaza.url}/api/mcp/listings`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
}

describe.each(BACKENDS)('listing write limits on %s', (backend) => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase(backend);
  });
  afterAll(async () => {
    await database?.dispose();
  });

  describe('one instance', () => {
    let plaza: TestPlaza;
    let apiKey: string;
    beforeAll(async () => {
      plaza = await startTestPlaza(backend, {
        db: database.db,
        env: { ...ENV, PLAZA_TRUST_PROXY: 'loopback', PLAZA_RATE_LIMIT_KEY_PREFIX: `t${randomToken(6)}:` },
      });
      apiKey = (
        await createAccountService({ prisma: plaza.db.prisma, clock: systemClock }).createAccount({
          email: 'lister@example.com',
        })
      ).apiKey;
    });
    afterAll(async () => {
      await plaza?.close();
    });

    it('answers an anonymous client 429 rate_limited with Retry-After past the limit, and stores nothing more', async () => {
      const from = { 'x-forwarded-for': '198.51.100.7' };
      for (let i = 0; i < 3; i++) {
        const res = await post(plaza, listing(), from);
        expect(res.status).toBe(201);
        expect(res.headers.get('ratelimit-policy')).toBe('"listings";q=3;w=60');
      }
      const refused = listing();
      const limited = await post(plaza, refused, from);
      expect(limited.status).toBe(429);
      const retryAfter = Number(limited.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(60);
      expect(limited.headers.get('ratelimit')).toMatch(/^"listings";r=0;t=\d+$/);
      const body: any = await limited.json();
      expect(body).toMatchObject({
        success: false,
        code: 'rate_limited',
        request_id: limited.headers.get('x-request-id'),
      });
      expect(body.message).toContain('at most 3 per 60 s');
      expect(await plaza.db.prisma.mcpEndpoint.count({ where: { url: refused.url } })).toBe(0);

      // Another client has its own budget.
      expect((await post(plaza, listing(), { 'x-forwarded-for': '198.51.100.8' })).status).toBe(201);
    });

    it("counts an account's writes against the account too, from whatever address they come", async () => {
      const auth = { authorization: `Bearer ${apiKey}` };
      const created: string[] = [];
      for (let i = 0; i < 2; i++) {
        const res = await post(plaza, listing(), { ...auth, 'x-forwarded-for': `203.0.113.${i + 1}` });
        expect(res.status).toBe(201);
        created.push(((await res.json()) as { id: string }).id);
      }
      // A change and a removal are writes as well.
      const patched = await fetch(`${plaza.url}/api/mcp/listings/${created[0]}`, {
        method: 'PATCH',
        headers: { 'content-type': 'application/json', ...auth, 'x-forwarded-for': '203.0.113.3' },
        body: JSON.stringify({ summary: 'Changed.' }),
      });
      expect(patched.status).toBe(200);
      expect(patched.headers.get('ratelimit-policy')).toBe('"listings-account";q=3;w=60');
      const removal = await fetch(`${plaza.url}/api/mcp/listings/${created[1]}`, {
        method: 'DELETE',
        headers: { ...auth, 'x-forwarded-for': '203.0.113.4' },
      });
      expect(removal.status).toBe(429);
      expect(((await removal.json()) as { code: string }).code).toBe('rate_limited');
      expect(await plaza.db.prisma.mcpEndpoint.count({ where: { id: created[1]! } })).toBe(1);
    });
  });

  describe.runIf(REDIS)('two instances sharing Redis', () => {
    let a: TestPlaza;
    let b: TestPlaza;
    beforeAll(async () => {
      const env = { ...ENV, REDIS_URL: REDIS!, PLAZA_RATE_LIMIT_KEY_PREFIX: `t${randomToken(6)}:` };
      [a, b] = await Promise.all([
        startTestPlaza(backend, { db: database.db, env }),
        startTestPlaza(backend, { db: database.db, env }),
      ]);
    });
    afterAll(async () => {
      await Promise.all([a?.close(), b?.close()]);
    });

    it('holds one limit across both', async () => {
      const statuses = [];
      for (let i = 0; i < 4; i++) statuses.push((await post(i % 2 === 0 ? a : b, listing())).status);
      expect(statuses).toEqual([201, 201, 201, 429]);
    });
  });
});
