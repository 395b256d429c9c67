/**
 * PostgreSQL really restarted under gateway load: a private cluster (initdb into a temporary
 * folder, its own port) serves one `plaza serve`; while agents call a provider through
 * `/mcp/p/<provider>`, the server is restarted with `pg_ctl restart -m fast`, then stopped for 2 s
 * and started again. Every call whose result reached the client has exactly one receipt
 * afterwards (the receipts written while the server was away are spooled and replayed), calls
 * fail only with 503, and the process keeps serving. Runs wherever Debian's PostgreSQL server
 * binaries are installed; it does not need TEST_DATABASE_URL. Bounded: setup 30 s, each test 28 s.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { startFaultUpstream } from '../support/fault-upstreams.ts';
import {
  gatewayLoad,
  type GatewayPlaza,
  listHealthy,
  settledReceiptCounts,
  startGatewayPlaza,
} from '../support/gateway-load.ts';
import { type PrivatePostgres, privatePostgresUnavailable, startPrivatePostgres } from '../support/private-postgres.ts';

const UNAVAILABLE = privatePostgresUnavailable();
if (UNAVAILABLE) console.warn(`pg-restart.test.ts skipped: ${UNAVAILABLE}`);

/** The postmaster's start time: it changes when, and only when, the server really restarted. */
async function startedAt(url: string): Promise<string> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<{ t: string }>('SELECT pg_postmaster_start_time()::text AS t')).rows[0]!.t;
  } finally {
    await client.end();
  }
}

/** Waits until `condition` holds, at most `timeoutMs` (the assertions after it say what was missing). */
async function until(condition: () => boolean, timeoutMs = 8_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
}

describe.skipIf(UNAVAILABLE !== undefined)('PostgreSQL restarted during gateway load (private cluster)', () => {
  let cluster: PrivatePostgres;
  let upstream: Awaited<ReturnType<typeof startFaultUpstream>>;
  let plaza: GatewayPlaza;
  let databaseUrl = '';

  beforeAll(async () => {
    cluster = await startPrivatePostgres();
    const admin = new pg.Client({ connectionString: cluster.url() });
    await admin.connect();
    await admin.query('CREATE DATABASE plaza');
    await admin.end();
    databaseUrl = cluster.url('plaza');
    upstream = await startFaultUpstream();
    plaza = await startGatewayPlaza({ DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn' });
    // Slow enough that calls are in flight at the upstream when the server goes away: their
    // receipts are written while it is down.
    await listHealthy(plaza.server.url, 'slow', `${upstream.url('ok')}?delay=300`);
  }, 30_000);
  afterAll(async () => {
    plaza?.server.child.kill('SIGKILL');
    await plaza?.server.exited;
    await upstream?.close();
    await cluster?.close();
  });

  /** Runs load around `fault`, then checks one receipt per answered call and only 503 failures. */
  async function underLoad(fault: () => Promise<void>) {
    const before = await startedAt(databaseUrl);
    const traffic = gatewayLoad(plaza.server.url, plaza.agentToken, 'slow', 6);
    await until(() => traffic.answered.length >= 5);
    const answeredBefore = traffic.answered.length;
    await fault();
    const answeredDuring = traffic.answered.length;
    await until(() => traffic.answered.length >= answeredDuring + 5);
    await traffic.stop();
    expect(await startedAt(databaseUrl), 'the server restarted').not.toBe(before);
    expect(answeredBefore, 'calls answered before the fault').toBeGreaterThanOrEqual(5);
    expect(traffic.answered.length - answeredDuring, 'calls answered after the server was back').toBeGreaterThanOrEqual(
      5,
    );

    const counts = await settledReceiptCounts(databaseUrl, traffic.answered, 8_000);
    const missing = traffic.answered.filter((id) => counts.get(id) !== 1);
    expect(
      missing,
      `${missing.length} of ${traffic.answered.length} answered calls without exactly one receipt`,
    ).toEqual([]);
    expect(
      [...counts.entries()].filter(([, n]) => n !== 1),
      'call ids with more than one receipt',
    ).toEqual([]);
    // No 5xx other than 503, and no connection dropped without an answer (status 0).
    expect(
      traffic.failures.filter((status) => status !== 503),
      `failed calls' statuses: ${traffic.failures.join(',')}`,
    ).toEqual([]);
    expect((await fetch(`${plaza.server.url}/health`)).status).toBe(200);
    return traffic;
  }

  it('keeps exactly one receipt per answered call across pg_ctl restart -m fast', async () => {
    await underLoad(() => cluster.restart());
  }, 28_000);

  it('keeps exactly one receipt per answered call when the server is stopped for 2 s, replaying the spool', async () => {
    const traffic = await underLoad(async () => {
      await cluster.stop();
      await new Promise((r) => setTimeout(r, 2_000));
      await cluster.start();
    });
    // Two seconds without a database: calls were refused with 503, and the calls already at the
    // upstream had their receipts spooled, then replayed.
    expect(traffic.failures.length).toBeGreaterThan(0);
    expect(plaza.server.output()).toContain('spooling receipts locally');
  }, 28_000);
});
