/**
 * Pins the receipt writer against real databases: group commit (count equals writes under
 * concurrency, fewer transactions than writes), sync answers only after commit, async flushes on
 * close, idempotence on call_id, one valid chain from two writers on one PostgreSQL, and the
 * spool: a database that goes away mid-run loses nothing and duplicates nothing.
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { generateKeyPair } from 'jose';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import {
  createJwsCheckpointSigner,
  createReceiptLog,
  createReceiptWriter,
  type ReceiptInput,
  type ReceiptsDatabase,
  type ReceiptWriter,
} from '../../receipts/index.ts';
import { type Database, openDatabase } from '../../src/db/index.ts';
import { BACKENDS, createTestDatabase, type TestDatabase } from '../support/databases.ts';

const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };
let counter = 0;

function receipt(overrides: Partial<ReceiptInput> = {}): Omit<ReceiptInput, 'time'> {
  counter++;
  return {
    callId: `call_${counter}_${Math.random().toString(36).slice(2, 8)}`,
    aginId: 'agin_1',
    agentPrincipal: 'agent:1',
    accountId: 'acc_1',
    tool: 'echo',
    provider: 'everything',
    status: 'ok',
    outcome: 'ok',
    latencyMs: 3,
    resultDigest: 'a'.repeat(64),
    ...overrides,
  };
}

async function count(db: ReceiptsDatabase): Promise<{ rows: number; distinct: number }> {
  const [row] = await db.prisma.$queryRawUnsafe<{ rows: number; distinct: number }[]>(
    `SELECT count(*)::int AS rows, count(DISTINCT "call_id")::int AS distinct FROM "receipts"`,
  );
  return row!;
}

/** Builds a checkpoint over the whole log: throws if any row's leaf or chain link is wrong. */
async function checkChain(db: Database): Promise<number> {
  const { privateKey } = await generateKeyPair('EdDSA', { crv: 'Ed25519' });
  const log = createReceiptLog({
    db,
    log: quiet,
    signer: createJwsCheckpointSigner(async () => ({ kid: 'test', privateKey })),
  });
  const cp = await log.checkpoint();
  expect(log.damage()).toBeUndefined();
  return cp?.treeSize ?? 0;
}

describe.each(BACKENDS)('receipt writer on %s', (backend) => {
  let t: TestDatabase;
  let spoolDir: string;
  const writers: ReceiptWriter[] = [];
  const open = (opts: Partial<Parameters<typeof createReceiptWriter>[0]> = {}) => {
    const w = createReceiptWriter({ db: t.db, log: quiet, durability: 'sync', spoolDir, ...opts });
    writers.push(w);
    return w;
  };

  beforeAll(async () => {
    t = await createTestDatabase(backend);
  });
  afterAll(async () => {
    await t.dispose();
  });
  beforeEach(async () => {
    spoolDir = await mkdtemp(join(tmpdir(), 'receipts-spool-'));
    await t.db.sql.exec('DELETE FROM "receipts"; DELETE FROM "receipt_checkpoints";');
  });
  afterEach(async () => {
    await Promise.all(writers.splice(0).map((w) => w.close()));
    await rm(spoolDir, { recursive: true, force: true });
  });

  it('commits 500 concurrent sync writes in few transactions, as one valid chain', async () => {
    const writer = open();
    await Promise.all(Array.from({ length: 500 }, () => writer.write(receipt())));
    expect(await count(t.db)).toEqual({ rows: 500, distinct: 500 });
    expect(writer.stats().batches).toBeLessThan(50);
    expect(await checkChain(t.db)).toBe(500);
  });

  it('answers a sync write only once the receipt is committed', async () => {
    const writer = open({ maxDelayMs: 20 });
    for (let i = 0; i < 5; i++) {
      const r = receipt();
      await writer.write(r);
      const rows = await t.db.prisma.$queryRawUnsafe<unknown[]>(
        `SELECT 1 FROM "receipts" WHERE "call_id" = $1`,
        r.callId,
      );
      expect(rows).toHaveLength(1);
    }
  });

  it('answers async writes at once and commits them by close', async () => {
    const writer = open({ durability: 'async', maxDelayMs: 50 });
    await Promise.all(Array.from({ length: 100 }, () => writer.write(receipt())));
    expect((await count(t.db)).rows).toBeLessThan(100);
    await writer.close();
    expect((await count(t.db)).rows).toBe(100);
  });

  it('stores one receipt per call_id however often it is written', async () => {
    const writer = open();
    const r = receipt();
    await Promise.all([writer.write(r), writer.write(r), writer.write({ ...r, outcome: 'again' })]);
    await writer.write(r);
    expect(await count(t.db)).toEqual({ rows: 1, distinct: 1 });
    expect(await checkChain(t.db)).toBe(1);
    // A batch holding a stored call_id among new ones stores the new ones, chained.
    await Promise.all([writer.write(receipt()), writer.write(r), writer.write(receipt())]);
    expect(await count(t.db)).toEqual({ rows: 3, distinct: 3 });
    expect(await checkChain(t.db)).toBe(3);
  });

  it('chains a batch onto its own last receipt in one round trip, and reads the head again once another writer moved it', async () => {
    const calls = { script: 0, transaction: 0 };
    const counted: ReceiptsDatabase = {
      prisma: t.db.prisma,
      sql: {
        transaction: (work, options) => {
          calls.transaction++;
          return t.db.sql.transaction(work, options);
        },
        script: (text) => {
          calls.script++;
          return t.db.sql.script(text);
        },
      },
    };
    const a = open({ db: counted });
    const b = open();
    for (let i = 0; i < 5; i++) await a.write(receipt());
    // The first batch reads the head; the next four chain onto the receipt before them.
    expect(calls).toEqual({ script: 4, transaction: 1 });
    // b draws its seq values from the sequence: they must come after a's chained ones.
    await b.write(receipt());
    await b.write(receipt());
    // a's tip is no longer the head: its script inserts nothing, and the batch reads the head.
    await a.write(receipt());
    expect(calls).toEqual({ script: 5, transaction: 2 });
    // After a miss a reads the head first, without an attempt that would fail while writers take
    // turns, until it finds its own receipt still the head; then one round trip again.
    await b.write(receipt());
    await a.write(receipt());
    expect(calls).toEqual({ script: 5, transaction: 3 });
    await a.write(receipt());
    expect(calls).toEqual({ script: 5, transaction: 4 });
    await a.write(receipt());
    expect(calls).toEqual({ script: 6, transaction: 4 });
    expect(await count(t.db)).toEqual({ rows: 12, distinct: 12 });
    expect(a.stats().spooled + b.stats().spooled).toBe(0);
    expect(await checkChain(t.db)).toBe(12);
  });

  it('rejects a malformed receipt before storing anything', () => {
    const writer = open();
    expect(() => writer.write({ ...receipt(), resultDigest: 'nope' })).toThrow(/resultDigest/);
  });

  it('stores text with NUL and lone surrogates as U+FFFD, hashed as stored, and keeps committing', async () => {
    // An upstream's error text or an agent's tool name may hold either; neither may stall the writer
    // (no text column takes NUL) nor make the stored row disagree with its leaf hash.
    const writer = open();
    const odd = receipt({
      tool: 'to\u0000ol',
      outcome: 'tool error: \ud800 half \udc00 pair \u0000',
      agentPrincipal: 'agent:\udbff',
    });
    await writer.write(odd);
    await writer.write(receipt());
    expect(writer.stats()).toMatchObject({ committed: 2, spooled: 0, degraded: false });
    const [row] = await t.db.prisma.$queryRawUnsafe<{ tool: string; outcome: string; agent_principal: string }[]>(
      `SELECT "tool", "outcome", "agent_principal" FROM "receipts" WHERE "call_id" = $1`,
      odd.callId,
    );
    expect(row).toEqual({
      tool: 'to\ufffdol',
      outcome: 'tool error: \ufffd half \ufffd pair \ufffd',
      agent_principal: 'agent:\ufffd',
    });
    expect(await checkChain(t.db)).toBe(2);
  });

  it('stores text that looks like SQL or ends a dollar-quoted literal exactly as written', async () => {
    // The INSERT carries the rows in a dollar-quoted literal (it goes with COMMIT in one round trip).
    const writer = open();
    const tricky = [`'); DROP TABLE "receipts"; --`, '$r0$ $r1$ $$ $r2$', 'back\\slash \\u0041 "quoted" \n\t€ 𝄞'];
    const written = tricky.map((s, i) =>
      receipt({ tool: s, outcome: tricky[(i + 1) % tricky.length]!, agentPrincipal: s }),
    );
    await Promise.all(written.map((r) => writer.write(r)));
    const rows = await t.db.prisma.$queryRawUnsafe<
      { call_id: string; tool: string; outcome: string; agent_principal: string }[]
    >(`SELECT "call_id", "tool", "outcome", "agent_principal" FROM "receipts"`);
    expect(
      rows
        .map((r) => ({ callId: r.call_id, tool: r.tool, outcome: r.outcome, agentPrincipal: r.agent_principal }))
        .sort((a, b) => a.callId.localeCompare(b.callId)),
    ).toEqual(
      written
        .map((r) => ({ callId: r.callId, tool: r.tool, outcome: r.outcome, agentPrincipal: r.agentPrincipal }))
        .sort((a, b) => a.callId.localeCompare(b.callId)),
    );
    expect(await checkChain(t.db)).toBe(3);
  });

  it('spools while the database fails and replays without loss or duplicates', async () => {
    let down = false;
    const flaky: ReceiptsDatabase = {
      prisma: t.db.prisma,
      sql: {
        transaction: (work, options) =>
          down ? Promise.reject(new Error('connection refused')) : t.db.sql.transaction(work, options),
        script: (text) => (down ? Promise.reject(new Error('connection refused')) : t.db.sql.script(text)),
      },
    };
    const writer = open({ db: flaky, retryIntervalMs: 60_000 });
    const before = Array.from({ length: 50 }, () => receipt());
    await Promise.all(before.map((r) => writer.write(r)));
    down = true;
    const during = Array.from({ length: 150 }, () => receipt());
    await Promise.all(during.map((r) => writer.write(r)));
    // One receipt written both before and during the outage must still be stored once.
    await writer.write(before[0]!);
    expect(writer.stats().degraded).toBe(true);
    expect(writer.stats().spooled).toBe(151);
    expect((await count(t.db)).rows).toBe(50);
    expect(await writer.replaySpool()).toBe(0);
    down = false;
    expect(await writer.replaySpool()).toBe(151);
    await writer.write(receipt());
    expect(await count(t.db)).toEqual({ rows: 201, distinct: 201 });
    expect(await readdir(spoolDir)).toEqual([]);
    expect(await checkChain(t.db)).toBe(201);
  });

  it('replays a spool left by an earlier process at start', async () => {
    let down = true;
    const flaky: ReceiptsDatabase = {
      prisma: t.db.prisma,
      sql: {
        transaction: () => (down ? Promise.reject(new Error('down')) : Promise.resolve(0 as never)),
        script: () => (down ? Promise.reject(new Error('down')) : Promise.resolve([])),
      },
    };
    const first = open({ db: flaky, retryIntervalMs: 60_000 });
    await Promise.all(Array.from({ length: 20 }, () => first.write(receipt())));
    await first.close();
    down = false;
    const second = open({ retryIntervalMs: 60_000 });
    await second.flush();
    await expect.poll(async () => (await count(t.db)).rows).toBe(20);
    expect(await checkChain(t.db)).toBe(20);
  });
});

describe.runIf(BACKENDS.includes('postgres'))('receipt writers on one PostgreSQL', () => {
  let t: TestDatabase;
  let spool: string;
  beforeAll(async () => {
    t = await createTestDatabase('postgres');
    spool = await mkdtemp(join(tmpdir(), 'receipts-spool-'));
  });
  afterAll(async () => {
    await t?.dispose();
    await rm(spool, { recursive: true, force: true });
  });

  it('two instances writing at once produce one valid chain', async () => {
    const second = await openDatabase({ kind: 'postgres', url: t.url!, poolMax: 5 });
    const a = createReceiptWriter({ db: t.db, log: quiet, durability: 'sync', spoolDir: join(spool, 'a') });
    const b = createReceiptWriter({ db: second, log: quiet, durability: 'sync', spoolDir: join(spool, 'b') });
    try {
      await Promise.all(Array.from({ length: 400 }, (_, i) => (i % 2 ? a : b).write(receipt())));
      expect(await count(t.db)).toEqual({ rows: 400, distinct: 400 });
      expect(await checkChain(t.db)).toBe(400);
    } finally {
      await a.close();
      await b.close();
      await second.close();
    }
  });

  it('survives the database refusing connections mid-run: nothing lost, nothing duplicated', async () => {
    await t.db.sql.exec('DELETE FROM "receipts"; DELETE FROM "receipt_checkpoints";');
    const name = new URL(t.url!).pathname.slice(1);
    const own = await openDatabase({ kind: 'postgres', url: t.url!, poolMax: 4 });
    const writer = createReceiptWriter({
      db: own,
      log: quiet,
      durability: 'sync',
      spoolDir: join(spool, 'outage'),
      retryIntervalMs: 100,
    });
    const admin = new pg.Client({ connectionString: process.env['TEST_DATABASE_URL'] });
    await admin.connect();
    try {
      await Promise.all(Array.from({ length: 100 }, () => writer.write(receipt())));
      await admin.query(`ALTER DATABASE "${name}" ALLOW_CONNECTIONS false`);
      await admin.query(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`,
        [name],
      );
      await Promise.all(Array.from({ length: 200 }, () => writer.write(receipt())));
      expect(writer.stats().spooled).toBeGreaterThan(0);
      await admin.query(`ALTER DATABASE "${name}" ALLOW_CONNECTIONS true`);
      await Promise.all(Array.from({ length: 50 }, () => writer.write(receipt())));
      await expect.poll(async () => (await count(t.db)).rows, { timeout: 10_000 }).toBe(350);
      await writer.flush();
      expect(await count(t.db)).toEqual({ rows: 350, distinct: 350 });
      expect(await checkChain(t.db)).toBe(350);
    } finally {
      await admin.query(`ALTER DATABASE "${name}" ALLOW_CONNECTIONS true`).catch(() => undefined);
      await admin.end();
      await writer.close();
      await own.close();
    }
  });
});
