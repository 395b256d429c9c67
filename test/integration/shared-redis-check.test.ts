/**
 * Pins the check that instances on one database share one Redis (src/app/shared-redis-check.ts):
 * instances on the same Redis database and key prefix stay quiet; one whose REDIS_URL names
 * another database number (the same server, the same prefix) is told apart and warned about, as
 * is one without Redis; notes of the old format bring no false warning during an upgrade, and
 * neither does a Redis that lost its id (flushed).
 * Runs when TEST_DATABASE_URL and TEST_REDIS_URL are set (the check runs only on PostgreSQL: the
 * embedded database has one instance).
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { watchSharedRedis } from '../../src/app/shared-redis-check.ts';
import { randomToken, systemClock } from '../../src/kernel/index.ts';
import { createLogger } from '../../src/log/index.ts';
import { createTestDatabase, type TestDatabase } from '../support/databases.ts';

const REDIS = process.env['TEST_REDIS_URL'];
const WARNING = 'do not share one Redis';

/** TEST_REDIS_URL with another database number of the same server. */
function otherDatabase(url: string): string {
  const parsed = new URL(url);
  const n = Number(parsed.pathname.slice(1) || '0');
  parsed.pathname = `/${(n + 1) % 16}`;
  return parsed.toString();
}

/** One instance's watcher, with the log lines it wrote. */
function instance(t: TestDatabase, redis: Redis | undefined, keyPrefix: string, checkMs = 100) {
  const lines: string[] = [];
  const log = createLogger({ level: 'info', destination: { write: (line: string) => void lines.push(line) } });
  const stop = watchSharedRedis({
    db: t.db,
    redis,
    keyPrefix,
    log,
    clock: systemClock,
    owner: `test:${randomToken(4)}`,
    checkMs,
    retryMs: 50,
  });
  const warnings = () =>
    lines
      .filter((line) => line.includes(WARNING))
      .map((line) => JSON.parse(line) as { level: number; here: string; elsewhere: string[] });
  return { stop, lines, warnings };
}

describe.skipIf(!REDIS || !process.env['TEST_DATABASE_URL'])('instances on one PostgreSQL sharing one Redis', () => {
  let t: TestDatabase;
  const clients: Redis[] = [];
  const prefix = `t:${randomToken(6)}:`;
  const connect = (url: string) => {
    const client = new Redis(url);
    clients.push(client);
    return client;
  };

  const notes = () =>
    t.db.prisma.$queryRawUnsafe<{ name: string }[]>(
      `SELECT "name" FROM "job_leases" WHERE "name" LIKE 'redis-place:%' AND "until" > now()`,
    );

  beforeAll(async () => {
    t = await createTestDatabase('postgres');
  });
  afterAll(async () => {
    for (const client of clients) {
      const keys = await client.keys(`${prefix}*`);
      if (keys.length > 0) await client.del(...keys);
      client.disconnect();
    }
    await t?.dispose();
  });

  it('tells an instance on another Redis database number apart from the two that share one, and warns', async () => {
    const a = instance(t, connect(REDIS!), prefix);
    const b = instance(t, connect(REDIS!), prefix);
    try {
      await expect.poll(notes, { timeout: 5_000 }).toHaveLength(1);
      await new Promise((r) => setTimeout(r, 400));
      expect(a.warnings()).toEqual([]);
      expect(b.warnings()).toEqual([]);

      // The same server and prefix, another database: its counts are not the others'.
      const c = instance(t, connect(otherDatabase(REDIS!)), prefix);
      try {
        await expect.poll(() => c.warnings().length, { timeout: 5_000 }).toBe(1);
        expect(c.warnings()[0]).toMatchObject({
          level: 40,
          here: 'Redis',
          elsewhere: ['another Redis, database number or key prefix'],
        });
        await expect.poll(() => a.warnings().length, { timeout: 5_000 }).toBe(1);
        await expect.poll(() => b.warnings().length, { timeout: 5_000 }).toBe(1);
      } finally {
        await c.stop();
      }

      // An instance without Redis is told apart from both places.
      const none = instance(t, undefined, prefix);
      try {
        await expect.poll(() => none.warnings().length, { timeout: 5_000 }).toBe(1);
        expect(none.warnings()[0]).toMatchObject({ here: 'no REDIS_URL', elsewhere: ['Redis', 'Redis'] });
      } finally {
        await none.stop();
      }
    } finally {
      await a.stop();
      await b.stop();
    }
  });

  it('takes no note of the old format (prefix only) for another place, except that of an instance without Redis', async () => {
    await t.db.prisma.$executeRawUnsafe(`DELETE FROM "job_leases"`);
    const until = new Date(Date.now() + 60_000).toISOString();
    // What an instance with Redis wrote before the upgrade: the rolling upgrade must not warn of it.
    await t.db.prisma.$executeRawUnsafe(
      `INSERT INTO "job_leases" ("name", "owner", "until") VALUES ('shared-redis:redis-0123456789abcdef', 'old', $1::timestamptz)`,
      until,
    );
    const a = instance(t, connect(REDIS!), `${prefix}legacy:`);
    try {
      await expect.poll(notes, { timeout: 5_000 }).toHaveLength(1);
      await new Promise((r) => setTimeout(r, 300));
      expect(a.warnings()).toEqual([]);
      await t.db.prisma.$executeRawUnsafe(
        `INSERT INTO "job_leases" ("name", "owner", "until") VALUES ('shared-redis:none', 'old', $1::timestamptz)`,
        until,
      );
      await expect.poll(() => a.warnings().length, { timeout: 5_000 }).toBe(1);
      expect(a.warnings()[0]).toMatchObject({ here: 'Redis', elsewhere: ['no REDIS_URL'] });
    } finally {
      await a.stop();
    }
  });

  it('gives no false warning when Redis loses its id (flushed): the instances read the new one', async () => {
    await t.db.prisma.$executeRawUnsafe(`DELETE FROM "job_leases"`);
    const ownPrefix = `${prefix}flush:`;
    const redis = connect(REDIS!);
    // b looks only once, at its start: its note of the old id is the one a must not take for another place.
    const b = instance(t, connect(REDIS!), ownPrefix, 60_000);
    await expect.poll(notes, { timeout: 5_000 }).toHaveLength(1);
    const a = instance(t, redis, ownPrefix);
    try {
      const first = await redis.get(`${ownPrefix}instances:redis-id`);
      expect(first).toEqual(expect.any(String));
      await new Promise((r) => setTimeout(r, 300));
      await redis.del(`${ownPrefix}instances:redis-id`);
      await expect
        .poll(async () => redis.get(`${ownPrefix}instances:redis-id`), { timeout: 5_000 })
        .toEqual(expect.any(String));
      expect(await redis.get(`${ownPrefix}instances:redis-id`)).not.toBe(first);
      await new Promise((r) => setTimeout(r, 500));
      expect(a.warnings()).toEqual([]);
      expect(b.warnings()).toEqual([]);
      expect(await notes()).toHaveLength(1);
    } finally {
      await a.stop();
      await b.stop();
      await redis.del(`${ownPrefix}instances:redis-id`);
    }
  });
});
