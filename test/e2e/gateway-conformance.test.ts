/**
 * The MCP conformance suite (`@modelcontextprotocol/conformance server`) run twice against the same
 * `@modelcontextprotocol/server-everything`: once directly, once through Plaza's
 * `/mcp/p/<provider>` passthrough. Every scenario (and every check) that passes direct must pass
 * through the gateway. The suite has no option for extra request headers, so a small forwarding
 * proxy in front of Plaza adds the agent's bearer token (it streams both ways, SSE included).
 *
 * Skipped when the conformance package is not installed (it is a dev dependency the lead adds);
 * `CONFORMANCE_BIN` may point at its `dist/index.js` instead.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createAccountService } from '../../src/accounts/index.ts';
import { systemClock } from '../../src/kernel/index.ts';
import { type Check, conformanceBin, runConformance } from '../support/conformance.ts';
import { type Forwarder, startForwarder } from '../support/conformance-forwarders.ts';
import { type EverythingServer, startEverything } from '../support/mcp-upstreams.ts';
import { startTestPlaza, type TestPlaza } from '../support/plaza.ts';

const BIN = conformanceBin();

/** A scenario with at least one passing check and no failing one. */
const passed = (checks: Check[] | undefined) =>
  !!checks && checks.some((c) => c.status === 'SUCCESS') && !checks.some((c) => c.status === 'FAILURE');

describe.skipIf(!BIN)('MCP conformance: server-everything direct vs through /mcp/p/<provider>', () => {
  let plaza: TestPlaza;
  let everything: EverythingServer;
  let proxy: Forwarder;

  beforeAll(async () => {
    [plaza, everything] = await Promise.all([
      startTestPlaza('pglite', { env: { PLAZA_ALLOW_PRIVATE_TARGETS: '1', LOG_LEVEL: 'warn' } }),
      startEverything(),
    ]);
    const apiKey = (
      await createAccountService({ prisma: plaza.db.prisma, clock: systemClock }).createAccount({
        email: 'conformance@example.com',
      })
    ).apiKey;
    const api = async (path: string, body?: unknown) => {
      const res = await fetch(`${plaza.url}${path}`, {
        method: body === undefined ? 'GET' : 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return (await res.json()) as any;
    };
    const listed = await api('/api/mcp/listings', {
      provider: 'everything',
      url: everything.url,
      registered_by: 'ops@example.com',
      agin_support: true,
      summary: 'Reference MCP server for the conformance run.',
    });
    let status = 'registered';
    for (let i = 0; i < 150 && status !== 'healthy'; i++) {
      await new Promise((r) => setTimeout(r, 100));
      status = (await api(`/api/mcp/endpoints/${listed.id}`)).status;
    }
    expect(status).toBe('healthy');
    const token = (await api('/api/agents', { display_name: 'Conformance agent' })).data.token as string;
    proxy = await startForwarder(`${plaza.url}/mcp/p/everything`, { headers: { authorization: `Bearer ${token}` } });
  }, 90_000);

  afterAll(async () => {
    await proxy?.close();
    await everything?.stop();
    await plaza?.close();
  });

  it('passes through the gateway every scenario and check that passes direct', async () => {
    // The active suite (not `--suite all`): see test/e2e/conformance.test.ts for the 2026 scenarios.
    const direct = await runConformance(everything.url, { suite: 'active' });
    const gateway = await runConformance(proxy.url, { suite: 'active' });
    const passingDirect = [...direct.scenarios].filter(([, checks]) => passed(checks)).map(([name]) => name);
    // The suite must actually have run against the upstream, or the comparison proves nothing.
    expect(passingDirect.length, `no scenario passed direct:\n${direct.output.slice(-4000)}`).toBeGreaterThan(0);

    const regressions: string[] = [];
    for (const scenario of passingDirect) {
      const through = gateway.scenarios.get(scenario);
      if (!through) {
        regressions.push(`${scenario}: did not run through the gateway`);
        continue;
      }
      for (const check of direct.scenarios.get(scenario)!.filter((c) => c.status === 'SUCCESS')) {
        const same = through.filter((c) => c.id === check.id);
        if (same.length === 0 || same.some((c) => c.status === 'FAILURE')) {
          const failure = same.find((c) => c.status === 'FAILURE');
          regressions.push(`${scenario} / ${check.id}: ${failure?.errorMessage ?? 'missing through the gateway'}`);
        }
      }
      if (!passed(through))
        regressions.push(
          `${scenario}: fails through the gateway (${through
            .filter((c) => c.status === 'FAILURE')
            .map((c) => c.errorMessage ?? c.id)
            .join('; ')})`,
        );
    }
    expect(regressions, `gateway output:\n${gateway.output.slice(-4000)}`).toEqual([]);
    // Every call the suite made through the gateway left a receipt (tools/call scenarios exist in every release).
    const calls = (
      await plaza.db.prisma.$queryRawUnsafe<{ n: number }[]>(
        `SELECT count(*)::int AS n FROM "receipts" WHERE "provider" = 'everything'`,
      )
    )[0]!.n;
    expect(calls).toBeGreaterThan(0);
  }, 600_000);
});
