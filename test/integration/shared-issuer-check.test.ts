/**
 * Pins the check that instances on one database name one issuer (src/app/shared-issuer-check.ts):
 * two instances with the same PUBLIC_BASE_URL stay quiet; one with another address (or with none,
 * so `http://localhost:<port>`) is warned about on every side, naming the others; the warning
 * ends when the odd note expires. Without PUBLIC_BASE_URL an instance says so once at start.
 * Runs when TEST_DATABASE_URL is set (the check runs only on PostgreSQL).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { watchSharedIssuer } from '../../src/app/shared-issuer-check.ts';
import type { Database } from '../../src/db/index.ts';
import { systemClock } from '../../src/kernel/index.ts';
import { createLogger } from '../../src/log/index.ts';
import { createTestDatabase, type TestDatabase } from '../support/databases.ts';

const DIFFERENT = 'name different issuers';
const UNSET = 'The issuer is a localhost address';

interface Line {
  level: number;
  msg: string;
  issuer: string;
  elsewhere?: string[];
}

/** One instance's watcher, with the log lines it wrote. */
function instance(t: TestDatabase, issuer: string) {
  const lines: Line[] = [];
  const log = createLogger({
    level: 'info',
    destination: { write: (line: string) => void lines.push(JSON.parse(line) as Line) },
  });
  const stop = watchSharedIssuer({ db: t.db, issuer, log, clock: systemClock, checkMs: 100 });
  const warnings = () => lines.filter((line) => line.msg.includes(DIFFERENT));
  return { stop, lines, warnings };
}

describe.skipIf(!process.env['TEST_DATABASE_URL'])('instances on one PostgreSQL naming one issuer', () => {
  let t: TestDatabase;
  const notes = () =>
    t.db.prisma.$queryRawUnsafe<{ owner: string }[]>(
      `SELECT "owner" FROM "job_leases" WHERE "name" LIKE 'issuer-place:%' AND "until" > now() ORDER BY "owner"`,
    );

  beforeAll(async () => {
    t = await createTestDatabase('postgres');
  });
  afterAll(async () => {
    await t?.dispose();
  });

  it('stays quiet for one address, warns every instance of another, and says when they agree again', async () => {
    const a = instance(t, 'https://plaza.example');
    const b = instance(t, 'https://plaza.example');
    try {
      await expect.poll(notes, { timeout: 5_000 }).toEqual([{ owner: 'https://plaza.example' }]);
      // Several rounds of checks (100 ms each) pass without a warning.
      await new Promise((r) => setTimeout(r, 400));
      expect([...a.lines, ...b.lines]).toEqual([]);

      // An instance left without PUBLIC_BASE_URL names itself, and says so at start.
      const c = instance(t, 'http://localhost:8081');
      expect(c.lines.filter((line) => line.msg.includes(UNSET))).toMatchObject([
        { level: 40, issuer: 'http://localhost:8081' },
      ]);
      try {
        await expect.poll(() => c.warnings().length, { timeout: 5_000 }).toBe(1);
        expect(c.warnings()[0]).toMatchObject({
          level: 40,
          issuer: 'http://localhost:8081',
          elsewhere: ['https://plaza.example'],
        });
        await expect.poll(() => a.warnings().length, { timeout: 5_000 }).toBe(1);
        await expect.poll(() => b.warnings().length, { timeout: 5_000 }).toBe(1);
        expect(a.warnings()[0]).toMatchObject({
          issuer: 'https://plaza.example',
          elsewhere: ['http://localhost:8081'],
        });
      } finally {
        await c.stop();
      }
      // The stopped instance's note expires (here: at once); the others say they agree again, once.
      await t.db.prisma.$executeRawUnsafe(
        `UPDATE "job_leases" SET "until" = now() - interval '1 second' WHERE "owner" = 'http://localhost:8081'`,
      );
      const agreed = (lines: Line[]) => lines.filter((line) => line.msg.includes('one issuer again')).length;
      await expect.poll(() => agreed(a.lines) + agreed(b.lines), { timeout: 5_000 }).toBe(2);
      expect(a.warnings()).toHaveLength(1);
    } finally {
      await a.stop();
      await b.stop();
    }
  });

  it('does not claim guest tokens are refused between instances that all name a localhost default', async () => {
    // README: on one machine DATABASE_URL and REDIS_URL are enough; guest tokens then pass between
    // the instances (localInstanceIssuers), only AGIN assertions' `iss` differ. The notes of the
    // stopped instances above would otherwise last 150 s.
    await t.db.prisma.$executeRawUnsafe(`DELETE FROM "job_leases" WHERE "name" LIKE 'issuer-place:%'`);
    const a = instance(t, 'http://localhost:18081');
    const b = instance(t, 'http://localhost:18082');
    try {
      await expect.poll(() => a.warnings().length + b.warnings().length, { timeout: 5_000 }).toBe(2);
      for (const line of [...a.warnings(), ...b.warnings()]) {
        expect(line.level).toBe(40);
        expect(line.msg).not.toMatch(/guest tokens from one may be refused/);
        expect(line.msg).toMatch(/guest tokens pass between them/);
        expect(line.msg).toMatch(/AGIN assertions/);
      }
    } finally {
      await a.stop();
      await b.stop();
    }
  });

  it('says nothing of the issuer at start when PUBLIC_BASE_URL is set', async () => {
    const a = instance(t, 'https://plaza.example');
    await a.stop();
    expect(a.lines.filter((line) => line.msg.includes(UNSET))).toEqual([]);
  });
});

describe('stopping the issuer check', () => {
  it('waits for the check under way, and writes no note after it', async () => {
    const writes: string[] = [];
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const db = {
      prisma: {
        $executeRawUnsafe: async (_sql: string, name: string) => {
          writes.push(name);
          await held;
          return 1;
        },
        $queryRawUnsafe: async () => [],
      },
    } as unknown as Database;
    const log = createLogger({ level: 'info', destination: { write: () => undefined } });
    const stop = watchSharedIssuer({ db, issuer: 'https://plaza.example', log, clock: systemClock, checkMs: 10 });
    expect(writes).toHaveLength(1);
    let stopped = false;
    const stopping = stop().then(() => (stopped = true));
    await new Promise((r) => setTimeout(r, 50));
    // The check is still writing its note: the stop waits for it.
    expect(stopped).toBe(false);
    release();
    await stopping;
    await new Promise((r) => setTimeout(r, 50));
    expect(writes).toHaveLength(1);
  });
});
