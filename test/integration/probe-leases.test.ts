/**
 * Pins the prober's leases when a batch waits behind one host's concurrency limit: the endpoints
 * stay leased until they are probed, so another instance never probes them at the same time.
 */
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createProber, type ProbeLog } from '../../probes/index.ts';
import { createProbeStore } from '../../src/marketplace/index.ts';
import { BACKENDS, createTestDatabase, type TestDatabase } from '../support/databases.ts';

const quiet: ProbeLog = {
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
};

describe.each(BACKENDS)('probe leases on %s', (backend) => {
  let t: TestDatabase;
  let hanging: Server;

  beforeAll(async () => {
    t = await createTestDatabase(backend);
    // Accepts every request and never answers: each probe runs into its timeout.
    hanging = createServer(() => undefined);
    hanging.listen(0, '127.0.0.1');
    await once(hanging, 'listening');
  });
  afterAll(async () => {
    hanging?.closeAllConnections();
    hanging?.close();
    await t?.dispose();
  });

  it('keeps a batch leased while it waits for one slow host, so another prober takes none of it', async () => {
    const port = (hanging.address() as AddressInfo).port;
    for (let i = 0; i < 4; i++) {
      await t.db.prisma.mcpEndpoint.create({
        data: {
          id: `mcp_slowhost00000${i}`,
          provider: `slow-${i}`,
          url: `http://127.0.0.1:${port}/mcp/${i}`,
          registeredBy: 'ops@example.com',
          nextProbeAt: new Date(Date.now() - 60_000),
        },
      });
    }
    let now = Date.now();
    const clock = { now: () => now };
    const options = {
      store: createProbeStore(t.db.prisma),
      clock,
      log: quiet,
      baseIntervalS: 300,
      allowPrivateTargets: true,
      timeoutMs: 300,
      concurrency: { global: 8, perHost: 1 },
    };
    const a = createProber({ ...options, owner: 'prober-a' });
    const b = createProber({ ...options, owner: 'prober-b' });
    try {
      const running = a.runDue();
      await expect.poll(async () => t.db.prisma.mcpEndpoint.count({ where: { leaseOwner: 'prober-a' } })).toBe(4);
      // The four probes run one after another (300 ms each); past a lease of 3 × timeout + 5 s,
      // the ones still queued would look abandoned.
      now += 6_000;
      expect(await b.runDue()).toEqual([]);
      expect(await running).toHaveLength(4);
      expect(await t.db.prisma.probeRun.count()).toBe(4);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });
});
