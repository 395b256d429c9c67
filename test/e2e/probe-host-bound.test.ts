/**
 * Pins the per-host probe bound (issue 31, item 4): many listings of one host — listed through
 * POST /api/mcp/listings under many paths, and one discovered from the registry — make Plaza send
 * that host at most PLAZA_PROBE_HOST_REQUESTS_PER_MIN requests in a minute, counted as the host
 * receives them (a real loopback MCP provider counting every HTTP request). Probes over the bound
 * are put off, not failed: their listings keep their status and come due again later.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { BACKENDS } from '../support/databases.ts';
import { type FixtureProvider, startFixtureProvider } from '../support/mcp-upstreams.ts';
import { startTestPlaza, type TestPlaza } from '../support/plaza.ts';

const BOUND = 12;
const LISTINGS = 30;

describe.each(BACKENDS)('per-host probe bound on %s', (backend) => {
  let plaza: TestPlaza;
  let fixture: FixtureProvider;

  beforeAll(async () => {
    [plaza, fixture] = await Promise.all([
      startTestPlaza(backend, {
        env: { PLAZA_ALLOW_PRIVATE_TARGETS: '1', PLAZA_BACKGROUND: '0', MCP_REGISTRY_URL: '', PLAZA_PROBE_BASE_INTERVAL_S: '5', PLAZA_PROBE_HOST_REQUESTS_PER_MIN: String(BOUND) },
      }),
      startFixtureProvider([[{ name: 'echo', description: 'Echoes.', inputSchema: { type: 'object' } }]]),
    ]);
  });
  afterAll(async () => {
    await plaza?.close();
    await fixture?.close();
  });

  const leased = async () => Number((await plaza.db.sql.query<{ n: number }>(`SELECT count(*)::int AS n FROM "mcp_endpoints" WHERE "lease_owner" IS NOT NULL`))[0]!.n);

  it(`sends one host at most ${BOUND} requests a minute however many listings point at it`, async () => {
    const origin = new URL(fixture.url).origin;
    for (let i = 0; i < LISTINGS; i++) {
      const res = await fetch(`${plaza.url}/api/mcp/listings`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ provider: `victim-${i}`, url: `${origin}/mcp/${i}`, registered_by: 'x@example.com', summary: 'Not mine.' }),
      });
      expect(res.status).toBe(201);
    }
    // The public registry lists the same host too: discovered listings share the bound.
    await plaza.db.sql.query(
      `INSERT INTO "mcp_endpoints" ("id", "provider", "url", "registered_by", "source", "registry_name", "updated_at") VALUES ('mcp_discovered0001', 'victim-discovered', $1, 'registry', 'discovered', 'io.example/victim', now())`,
      [`${origin}/discovered`],
    );
    // Each new listing is probed at once; wait until those first probes have all finished.
    await expect.poll(leased, { timeout: 20_000, interval: 50 }).toBe(0);

    // Then the probe loop comes round three times with every listing due (a short interval passing).
    let deferred = 0;
    for (let round = 0; round < 3; round++) {
      await plaza.db.sql.query(`UPDATE "mcp_endpoints" SET "next_probe_at" = now() - interval '1 second'`);
      const results = await plaza.marketplace.prober.runDue();
      expect(results).toHaveLength(LISTINGS + 1);
      deferred += results.filter((r) => r.deferred).length;
    }

    expect(fixture.requests).toBeGreaterThan(0);
    expect(fixture.requests, `requests the host received`).toBeLessThanOrEqual(BOUND);
    expect(deferred).toBeGreaterThan(0);
    const rows = await plaza.db.sql.query<{ status: string; n: number }>(`SELECT "status", count(*)::int AS n FROM "mcp_endpoints" GROUP BY "status"`);
    const byStatus = Object.fromEntries(rows.map((r) => [r.status, Number(r.n)]));
    // Some were probed within the bound; the rest were put off, not failed: nothing is degraded or unreachable.
    expect(byStatus['healthy']).toBeGreaterThan(0);
    expect(byStatus['healthy'] ?? 0).toBeLessThanOrEqual(BOUND);
    expect(byStatus['registered']).toBeGreaterThan(0);
    expect(Object.keys(byStatus).sort()).toEqual(['healthy', 'registered']);
    // A put-off listing comes due again once the host's minute is over, not before.
    const soonest = (await plaza.db.sql.query<{ at: Date }>(`SELECT min("next_probe_at") AS at FROM "mcp_endpoints" WHERE "status" = 'registered'`))[0]!.at;
    expect(new Date(soonest).getTime()).toBeGreaterThan(Date.now());
  });
});
