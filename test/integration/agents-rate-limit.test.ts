/**
 * Pins the rate limit of the agent writes (POST /api/agents, …/:id/token, …/:id/revoke): per
 * account once authenticated (PLAZA_RATE_LIMIT_AGENTS_PER_MIN), per client address for requests
 * whose credential is refused, answered 429 in the token shape with Retry-After; listing is not
 * counted, and one account's budget is not another's. Shared by two instances through Redis
 * (TEST_REDIS_URL).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createAccountService } from '../../src/accounts/index.ts';
import { randomToken, systemClock } from '../../src/kernel/index.ts';
import { BACKENDS, createTestDatabase, type TestDatabase } from '../support/databases.ts';
import { startTestPlaza, type TestPlaza } from '../support/plaza.ts';

const REDIS = process.env['TEST_REDIS_URL'];
const LIMIT = 3;

function post(plaza: TestPlaza, path: string, key: string, body: unknown = {}) {
  return fetch(`${plaza.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

/** The 429 of the token surface: Retry-After, the RateLimit headers, and the OpenAI-style error object. */
async function expectRateLimited(res: Response): Promise<void> {
  expect(res.status).toBe(429);
  expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  expect(res.headers.get('ratelimit-policy')).toMatch(/;q=3;w=60$/);
  expect(await res.json()).toMatchObject({
    success: false,
    code: 'RATE_LIMITED',
    message: expect.stringMatching(/at most 3 per 60 s/),
    request_id: expect.any(String),
    error: { type: 'rate_limit_error', code: 'RATE_LIMITED' },
  });
}

describe.each(BACKENDS)('agent write limits on %s', (backend) => {
  let database: TestDatabase;
  let n = 0;
  /** A new account's API key. */
  const newAccount = async () =>
    (
      await createAccountService({ prisma: database.db.prisma, clock: systemClock }).createAccount({
        email: `limits-${backend}-${n++}@example.com`,
      })
    ).apiKey;

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
        env: { PLAZA_RATE_LIMIT_AGENTS_PER_MIN: String(LIMIT), PLAZA_BACKGROUND: '0' },
      });
    });
    afterAll(async () => {
      await plaza?.close();
    });

    it('counts creations, token reissues and revocations per account, and answers 429 past the limit', async () => {
      const key = await newAccount();
      const created = await post(plaza, '/api/agents', key, { display_name: 'Limited' });
      expect(created.status).toBe(201);
      expect(created.headers.get('ratelimit')).toMatch(/;r=2;t=\d+$/);
      const id = ((await created.json()) as any).data.agent.id as string;
      expect((await post(plaza, `/api/agents/${id}/token`, key)).status).toBe(200);
      expect((await post(plaza, `/api/agents/${id}/revoke`, key)).status).toBe(200);
      await expectRateLimited(await post(plaza, '/api/agents', key, { display_name: 'One too many' }));
      // Nothing was created by the refused request; listing is a read, not counted.
      const listed = await fetch(`${plaza.url}/api/agents`, { headers: { authorization: `Bearer ${key}` } });
      expect(listed.status).toBe(200);
      expect(((await listed.json()) as any).data.agents.map((a: any) => a.display_name)).not.toContain('One too many');
      // Another account on the same address has its own budget.
      expect((await post(plaza, '/api/agents', await newAccount(), { display_name: 'Neighbour' })).status).toBe(201);
    });

    it('counts requests whose credential is refused per client address, without touching the accounts on it', async () => {
      const wrong = `plz_${'0'.repeat(13)}_${'0'.repeat(40)}`;
      const guest = (
        (await (
          await fetch(`${plaza.url}/api/auth/guest-token`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: '{}',
          })
        ).json()) as any
      ).data.token as string;
      expect((await post(plaza, '/api/agents', wrong, { display_name: 'x' })).status).toBe(401);
      expect((await post(plaza, '/api/agents/agt_x/token', 'not-a-key')).status).toBe(401);
      // A guest token is valid, but not on these routes: counted as refused too.
      expect((await post(plaza, '/api/agents', guest, { display_name: 'x' })).status).toBe(403);
      await expectRateLimited(await post(plaza, '/api/agents', wrong, { display_name: 'x' }));
      await expectRateLimited(await post(plaza, '/api/agents/agt_x/revoke', guest));
      // An account signing its requests from the same address is not held back by them.
      expect(
        (await post(plaza, '/api/agents', await newAccount(), { display_name: 'Same address, signed' })).status,
      ).toBe(201);
    });
  });

  describe.skipIf(!REDIS)('two instances sharing Redis', () => {
    let a: TestPlaza;
    let b: TestPlaza;
    beforeAll(async () => {
      const env = {
        REDIS_URL: REDIS!,
        PLAZA_RATE_LIMIT_KEY_PREFIX: `plaza-test:${randomToken(8)}:`,
        PLAZA_RATE_LIMIT_AGENTS_PER_MIN: String(LIMIT),
        PLAZA_BACKGROUND: '0',
      };
      a = await startTestPlaza(backend, { env, db: database.db });
      b = await startTestPlaza(backend, { env, db: database.db });
    });
    afterAll(async () => {
      await b?.close();
      await a?.close();
    });

    it('enforces one budget per account across both instances', async () => {
      const key = await newAccount();
      const statuses = [];
      for (const instance of [a, b, a, b])
        statuses.push((await post(instance, '/api/agents', key, { display_name: 'Shared' })).status);
      expect(statuses).toEqual([201, 201, 201, 429]);
      expect(a.logLines().some((line) => line.includes('fall back'))).toBe(false);
    });
  });
});
