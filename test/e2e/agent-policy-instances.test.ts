/**
 * Agent policies and quotas across two Plaza instances on one database: with PostgreSQL and Redis,
 * one global count (calls on either instance add up); without Redis, each instance counts alone and
 * says so in its log at start. A policy change or a quota raise made on one instance is applied by
 * the other within 5 s. The PostgreSQL + Redis pair runs when TEST_DATABASE_URL and TEST_REDIS_URL
 * are set; the pair without Redis always (PGlite).
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createAccountService } from '../../src/accounts/index.ts';
import { openDatabase } from '../../src/db/index.ts';
import { randomToken, systemClock } from '../../src/kernel/index.ts';
import { createTestDatabase, type TestDatabase } from '../support/databases.ts';
import { startTestPlaza, type TestPlaza } from '../support/plaza.ts';
import { type RecordingCrm, startRecordingCrm } from '../support/policy-upstream.ts';

const DATABASE = process.env['TEST_DATABASE_URL'];
const REDIS = process.env['TEST_REDIS_URL'];
const ENV = { PLAZA_ALLOW_PRIVATE_TARGETS: '1', PLAZA_BACKGROUND: '0' };

type Result = { isError?: boolean; content: { text: string }[] };

/** Two instances, an account key, a listed recording provider, and helpers over them. */
function twoInstances(start: () => Promise<{ a: TestPlaza; b: TestPlaza; close(): Promise<void> }>) {
  const ctx = {
    a: undefined as unknown as TestPlaza,
    b: undefined as unknown as TestPlaza,
    crm: undefined as unknown as RecordingCrm,
    key: '',
    close: async () => {},
  };
  beforeAll(async () => {
    const started = await start();
    Object.assign(ctx, started);
    ctx.crm = await startRecordingCrm();
    ctx.key = (
      await createAccountService({ prisma: ctx.a.db.prisma, clock: systemClock }).createAccount({
        email: `instances-${randomToken(4)}@example.com`,
      })
    ).apiKey;
    const listed = await api(ctx.a, 'POST', '/api/mcp/listings', {
      provider: 'crm',
      url: ctx.crm.url,
      registered_by: 'ops@example.com',
      summary: 'The CRM.',
    });
    for (let i = 0; i < 150; i++) {
      if ((await api(ctx.a, 'GET', `/api/mcp/endpoints/${listed.body.id}`)).body.status === 'healthy') break;
      await new Promise((r) => setTimeout(r, 100));
    }
  }, 90_000);
  afterAll(async () => {
    await ctx.crm?.close();
    await ctx.close();
  });
  async function api(on: TestPlaza, method: string, path: string, body?: unknown) {
    const res = await fetch(`${on.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${ctx.key}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as any };
  }
  async function call(on: TestPlaza, token: string, name = 'crm__read_contacts'): Promise<Result> {
    const client = new Client({ name: 'instances', version: '1' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${on.url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${token}` } },
      }),
    );
    try {
      return (await client.callTool({ name, arguments: {} })) as Result;
    } finally {
      await client.close();
    }
  }
  async function agent(policy?: unknown): Promise<{ id: string; token: string }> {
    const { body } = await api(ctx.a, 'POST', '/api/agents', { display_name: 'instances' });
    if (policy !== undefined) await api(ctx.a, 'PUT', `/api/agents/${body.data.agent.id}/policy`, policy);
    return { id: body.data.agent.id, token: body.data.token };
  }
  /** Calls on `on` until `done` says the answer is the expected one; the milliseconds it took. */
  async function until(on: TestPlaza, token: string, done: (r: Result) => boolean): Promise<number> {
    const started = Date.now();
    while (Date.now() - started < 10_000) {
      if (done(await call(on, token))) return Date.now() - started;
      await new Promise((r) => setTimeout(r, 100));
    }
    return Infinity;
  }
  return { ctx, api, call, agent, until };
}

/** The change-propagation checks both pairs make. */
function propagationTests(t: ReturnType<typeof twoInstances>) {
  it('applies a policy change made on one instance on the other within 5 s', async () => {
    const agent = await t.agent();
    // The other instance has read the agent's (absent) policy and keeps it for a while.
    expect((await t.call(t.ctx.b, agent.token)).isError).toBeFalsy();
    const put = await t.api(t.ctx.a, 'PUT', `/api/agents/${agent.id}/policy`, {
      rules: [{ effect: 'deny', provider: 'crm', tool: '*' }],
    });
    expect(put.status).toBe(200);
    expect(await t.until(t.ctx.b, agent.token, (r) => r.isError === true)).toBeLessThan(5_000);
  });

  it('applies a quota raise made on one instance on the other within 5 s', async () => {
    const agent = await t.agent({ limits: { per_day: 1 } });
    expect((await t.call(t.ctx.b, agent.token)).isError).toBeFalsy();
    expect((await t.call(t.ctx.b, agent.token)).isError).toBe(true);
    await t.api(t.ctx.a, 'PUT', `/api/agents/${agent.id}/policy`, { limits: { per_day: 100 } });
    expect(await t.until(t.ctx.b, agent.token, (r) => r.isError !== true)).toBeLessThan(5_000);
  });
}

describe('two instances without Redis (PGlite)', () => {
  let shared: TestDatabase;
  const t = twoInstances(async () => {
    shared = await createTestDatabase('pglite');
    const [a, b] = await Promise.all([
      startTestPlaza('pglite', { db: shared.db, env: ENV }),
      startTestPlaza('pglite', { db: shared.db, env: ENV }),
    ]);
    return { a, b, close: async () => (await Promise.all([a.close(), b.close()]), await shared.dispose()) };
  });

  it('counts each instance’s calls alone, and says so in each log at start', async () => {
    for (const instance of [t.ctx.a, t.ctx.b])
      expect(instance.logLines().filter((l) => l.includes('counted per instance (no REDIS_URL)'))).toHaveLength(1);
    const agent = await t.agent({ limits: { per_day: 1 } });
    const answers = [t.ctx.a, t.ctx.a, t.ctx.b, t.ctx.b];
    const results: boolean[] = [];
    for (const on of answers) results.push((await t.call(on, agent.token)).isError ?? false);
    expect(results).toEqual([false, true, false, true]);
  });

  propagationTests(t);
});

describe.runIf(DATABASE && REDIS)('two instances on PostgreSQL and Redis', () => {
  let shared: TestDatabase;
  const t = twoInstances(async () => {
    shared = await createTestDatabase('postgres');
    const second = await openDatabase({ kind: 'postgres', url: shared.url!, poolMax: 5 });
    const env = { ...ENV, REDIS_URL: REDIS!, PLAZA_RATE_LIMIT_KEY_PREFIX: `policy-${randomToken(6)}:` };
    const [a, b] = await Promise.all([
      startTestPlaza('postgres', { db: shared.db, env }),
      startTestPlaza('postgres', { db: second, env }),
    ]);
    return {
      a,
      b,
      close: async () => {
        await Promise.all([a.close(), b.close()]);
        await second.close();
        await shared.dispose();
      },
    };
  });

  it('keeps one count for both instances', async () => {
    for (const instance of [t.ctx.a, t.ctx.b])
      expect(instance.logLines().some((l) => l.includes('counted per instance'))).toBe(false);
    const agent = await t.agent({ limits: { per_day: 2 } });
    const results: boolean[] = [];
    for (const on of [t.ctx.a, t.ctx.b, t.ctx.a, t.ctx.b])
      results.push((await t.call(on, agent.token)).isError ?? false);
    expect(results).toEqual([false, false, true, true]);
    const usage = (await t.api(t.ctx.b, 'GET', `/api/agents/${agent.id}/policy`)).body.data.usage;
    expect(usage.day).toMatchObject({ used: 2, limit: 2 });
  });

  propagationTests(t);
});
