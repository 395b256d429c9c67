/**
 * Pins the per-host probe bound (issue 31, item 4): many listings of one host — listed through
 * POST /api/mcp/listings under many paths, and one discovered from the registry — make Plaza send
 * that host at most PLAZA_PROBE_HOST_REQUESTS_PER_MIN requests in a minute, counted as the host
 * receives them (a real loopback MCP provider counting every HTTP request). Probes over the bound
 * are put off, not failed: their listings keep their status and come due again later.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { randomToken } from '../../src/kernel/index.ts';
import { BACKENDS, createTestDatabase, type TestDatabase } from '../support/databases.ts';
import { type FixtureProvider, startFixtureProvider } from '../support/mcp-upstreams.ts';
import { startTestPlaza, type TestPlaza } from '../support/plaza.ts';

const BOUND = 12;
const LISTINGS = 30;

const REDIS = process.env['TEST_REDIS_URL'];
const ENV = {
  PLAZA_ALLOW_PRIVATE_TARGETS: '1',
  PLAZA_BACKGROUND: '0',
  MCP_REGISTRY_URL: '',
  PLAZA_PROBE_BASE_INTERVAL_S: '5',
  PLAZA_PROBE_HOST_REQUESTS_PER_MIN: String(BOUND),
};

/**
 * Lists LISTINGS paths of the fixture's host (spread over the instances) and one discovered
 * listing of it, lets their first probes finish, then runs three probe rounds with every listing
 * due on every instance at once; answers how many probes were put off.
 */
async function fanOut(plazas: TestPlaza[], fixture: FixtureProvider): Promise<number> {
  const db = plazas[0]!.db;
  const origin = new URL(fixture.url).origin;
  for (let i = 0; i < LISTINGS; i++) {
    const res = await fetch(`${plazas[i % plazas.length]!.url}/api/mcp/listings`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        provider: `victim-${i}`,
        url: `${origin}/mcp/${i}`,
        registered_by: 'x@example.com',
        summary: 'Not mine.',
      }),
    });
    expect(res.status).toBe(201);
  }
  // The public registry lists the same host too: discovered listings share the bound.
  await db.sql.query(
    `INSERT INTO "mcp_endpoints" ("id", "provider", "url", "registered_by", "source", "registry_name", "updated_at") VALUES ('mcp_discovered0001', 'victim-discovered', $1, 'registry', 'discovered', 'io.example/victim', now())`,
    [`${origin}/discovered`],
  );
  // Each new listing is probed at once (after its 201, in the background); wait until those first
  // probes have all finished: none holds a lease, and each listed one was probed or put off (a
  // listing whose probe had not yet begun would otherwise be due in the first round and then
  // probed behind it).
  const unsettled = async () =>
    Number(
      (
        await db.sql.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM "mcp_endpoints" WHERE "lease_owner" IS NOT NULL OR ("source" <> 'discovered' AND "next_probe_at" <= now())`,
        )
      )[0]!.n,
    );
  await expect.poll(unsettled, { timeout: 20_000, interval: 50 }).toBe(0);

  // Then the probe loops come round three times with every listing due (a short interval passing).
  let deferred = 0;
  for (let round = 0; round < 3; round++) {
    await db.sql.query(`UPDATE "mcp_endpoints" SET "next_probe_at" = now() - interval '1 second'`);
    const results = (await Promise.all(plazas.map((p) => p.marketplace.prober.runDue()))).flat();
    expect(results).toHaveLength(LISTINGS + 1);
    deferred += results.filter((r) => r.deferred).length;
  }
  return deferred;
}

/** Some listings were probed within the bound; the rest were put off, not failed, until the host's minute is over. */
async function expectPutOff(db: TestPlaza['db']): Promise<void> {
  const rows = await db.sql.query<{ status: string; n: number }>(
    `SELECT "status", count(*)::int AS n FROM "mcp_endpoints" GROUP BY "status"`,
  );
  const byStatus = Object.fromEntries(rows.map((r) => [r.status, Number(r.n)]));
  expect(byStatus['healthy']).toBeGreaterThan(0);
  expect(byStatus['healthy'] ?? 0).toBeLessThanOrEqual(BOUND);
  expect(byStatus['registered']).toBeGreaterThan(0);
  expect(Object.keys(byStatus).sort()).toEqual(['healthy', 'registered']);
  const soonest = (
    await db.sql.query<{ at: Date }>(
      `SELECT min("next_probe_at") AS at FROM "mcp_endpoints" WHERE "status" = 'registered'`,
    )
  )[0]!.at;
  expect(new Date(soonest).getTime()).toBeGreaterThan(Date.now());
}

const tools = [[{ name: 'echo', description: 'Echoes.', inputSchema: { type: 'object' } }]];

describe.each(BACKENDS)('per-host probe bound on %s', (backend) => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase(backend);
  });
  afterAll(async () => {
    await database?.dispose();
  });

  describe('one instance', () => {
    let plaza: TestPlaza;
    let fixture: FixtureProvider;
    beforeAll(async () => {
      [plaza, fixture] = await Promise.all([
        startTestPlaza(backend, { db: database.db, env: ENV }),
        startFixtureProvider(tools),
      ]);
    });
    afterAll(async () => {
      await plaza?.close();
      await fixture?.close();
      await database.db.sql.query(`DELETE FROM "mcp_endpoints"`);
    });

    it(`sends one host at most ${BOUND} requests a minute however many listings point at it`, async () => {
      const deferred = await fanOut([plaza], fixture);
      expect(fixture.requests).toBeGreaterThan(0);
      expect(fixture.requests, 'requests the host received').toBeLessThanOrEqual(BOUND);
      expect(deferred).toBeGreaterThan(0);
      await expectPutOff(plaza.db);
    });
  });

  describe.runIf(REDIS)('two instances sharing Redis', () => {
    let a: TestPlaza;
    let b: TestPlaza;
    let fixture: FixtureProvider;
    beforeAll(async () => {
      const env = { ...ENV, REDIS_URL: REDIS!, PLAZA_RATE_LIMIT_KEY_PREFIX: `t${randomToken(6)}:` };
      [a, b, fixture] = await Promise.all([
        startTestPlaza(backend, { db: database.db, env }),
        startTestPlaza(backend, { db: database.db, env }),
        startFixtureProvider(tools),
      ]);
    });
    afterAll(async () => {
      await Promise.all([a?.close(), b?.close(), fixture?.close()]);
    });

    it(`sends the host at most ${BOUND} requests a minute from both together`, async () => {
      const deferred = await fanOut([a, b], fixture);
      expect(fixture.requests, 'requests the host received').toBeLessThanOrEqual(BOUND);
      expect(deferred).toBeGreaterThan(0);
      await expectPutOff(a.db);
    });
  });
});
