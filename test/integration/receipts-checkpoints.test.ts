/**
 * Pins checkpointing: two instances running the lease loop produce signed checkpoints that keep up
 * with the log (one instance holds the lease), later checkpoints are provably consistent with
 * earlier ones (RFC 6962 consistency proof, also over HTTP, also for another instance's checkpoint
 * while a sync of its own is still in flight), and an instance refuses to sign over a row altered
 * in the database.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { exportJWK, generateKeyPair } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import {
  createJwsCheckpointSigner,
  createReceiptLog,
  createReceiptWriter,
  type ReceiptLog,
  type ReceiptWriter,
  verifyConsistency,
  verifyExport,
} from '../../receipts/index.ts';
import { BACKENDS } from '../support/databases.ts';
import { startTestPlaza, type TestPlaza } from '../support/plaza.ts';

const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };

describe.each(BACKENDS)('receipt checkpoints on %s', (backend) => {
  let plaza: TestPlaza;
  let dir: string;
  let writer: ReceiptWriter;
  let n = 0;
  const write = (count: number, accountId: string | null = null) =>
    Promise.all(
      Array.from({ length: count }, () =>
        writer.write({
          callId: `cp_${n++}`,
          aginId: 'agin',
          agentPrincipal: 'agent',
          accountId,
          tool: 't',
          provider: 'p',
          status: 'ok',
          outcome: 'ok',
          latencyMs: 1,
          resultDigest: 'f'.repeat(64),
        }),
      ),
    );
  const newLog = async (): Promise<ReceiptLog> => {
    const { privateKey } = await generateKeyPair('EdDSA', { crv: 'Ed25519' });
    return createReceiptLog({
      db: plaza.db,
      log: quiet,
      signer: createJwsCheckpointSigner(async () => ({ kid: 'k', privateKey })),
    });
  };

  beforeAll(async () => {
    plaza = await startTestPlaza(backend);
    dir = await mkdtemp(join(tmpdir(), 'receipts-cp-'));
    writer = createReceiptWriter({ db: plaza.db, log: quiet, durability: 'sync', spoolDir: dir });
  });
  afterAll(async () => {
    await writer.close();
    await plaza.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('keeps checkpoints up with the log from one lease holder, each consistent with the last', async () => {
    const [a, b] = [await newLog(), await newLog()];
    const stops = [
      a.startCheckpointing({ intervalMs: 50, owner: 'instance-a' }),
      b.startCheckpointing({ intervalMs: 50, owner: 'instance-b' }),
    ];
    try {
      await write(10);
      await expect.poll(async () => (await a.getLatestCheckpoint())?.treeSize, { timeout: 5_000 }).toBe(10);
      const first = (await a.getLatestCheckpoint())!;
      await write(7);
      await expect.poll(async () => (await b.getLatestCheckpoint())?.treeSize, { timeout: 5_000 }).toBe(17);
      const second = (await b.getLatestCheckpoint())!;
      const leases = await plaza.db.prisma.jobLease.findMany({ where: { name: 'receipts.checkpoint' } });
      expect(leases).toHaveLength(1);
      expect(['instance-a', 'instance-b']).toContain(leases[0]!.owner);

      const proof = (await a.consistency(10, 17))!.map((h) => Buffer.from(h, 'hex'));
      const hex = (h: string) => Buffer.from(h, 'hex');
      expect(verifyConsistency(10, 17, hex(first.rootHash), hex(second.rootHash), proof)).toBe(true);
      expect(verifyConsistency(10, 17, hex(second.rootHash), hex(second.rootHash), proof)).toBe(false);

      const res = await fetch(`${plaza.url}/api/receipts/checkpoints/consistency?first=10&second=17`);
      const body = (await res.json()) as { data: { consistency_path: string[] } };
      expect(body.data.consistency_path.map(hex)).toEqual(proof);
      expect((await fetch(`${plaza.url}/api/receipts/checkpoints/consistency?first=10&second=99`)).status).toBe(404);
      expect((await fetch(`${plaza.url}/api/receipts/checkpoints/consistency?first=x&second=17`)).status).toBe(400);
    } finally {
      await Promise.all(stops.map((stop) => stop()));
    }
  });

  it('exports what its checkpoint covers, so an export taken while receipts arrive still verifies', async () => {
    const { privateKey, publicKey } = await generateKeyPair('EdDSA', { crv: 'Ed25519', extractable: true });
    const log = createReceiptLog({
      db: plaza.db,
      log: quiet,
      signer: createJwsCheckpointSigner(async () => ({ kid: 'export-k', privateKey })),
    });
    const jwks = { keys: [{ ...(await exportJWK(publicKey)), kid: 'export-k', alg: 'EdDSA', purpose: 'receipts' }] };
    const forAccount = (count: number) =>
      Promise.all(
        Array.from({ length: count }, () =>
          writer.write({
            callId: `ex_${n++}`,
            aginId: 'agin',
            agentPrincipal: 'agent',
            accountId: 'acc_export',
            tool: 't',
            provider: 'p',
            status: 'ok',
            outcome: 'ok',
            latencyMs: 1,
            resultDigest: 'f'.repeat(64),
          }),
        ),
      );
    await forAccount(3);
    const lines = log.exportLines({ accountId: 'acc_export' });
    const first = await lines.next();
    // Two more are committed after the checkpoint line went out, before the receipts are read.
    await forAccount(2);
    const rest: string[] = [];
    for await (const line of lines) rest.push(line);
    const report = await verifyExport([first.value as string, ...rest], jwks);
    expect(report).toMatchObject({ ok: true, receipts: 3 });
    // The next export covers all five.
    const again: string[] = [];
    for await (const line of log.exportLines({ accountId: 'acc_export' })) again.push(line);
    expect(await verifyExport(again, jwks)).toMatchObject({ ok: true, receipts: 5 });
  });

  it('answers for a checkpoint of another instance while an older sync of its own is still in flight', async () => {
    // Instance A's reads of the log answer late: a sync that read before B's receipts were
    // committed is still running when A is asked about B's newer checkpoint.
    let slow = false;
    const prisma = plaza.db.prisma;
    const lagging = new Proxy(prisma, {
      get(target, property) {
        const value = Reflect.get(target, property) as unknown;
        if (property !== '$queryRawUnsafe') return typeof value === 'function' ? value.bind(target) : value;
        return async (query: string, ...values: unknown[]) => {
          const rows = await target.$queryRawUnsafe(query, ...values);
          if (slow && query.includes('WHERE "seq" > $1::bigint ORDER BY')) {
            slow = false;
            await new Promise((resolve) => setTimeout(resolve, 1_000));
          }
          return rows;
        };
      },
    });
    const { privateKey } = await generateKeyPair('EdDSA', { crv: 'Ed25519' });
    const signer = createJwsCheckpointSigner(async () => ({ kid: 'receipts_race', privateKey }));
    const a = createReceiptLog({ db: { ...plaza.db, prisma: lagging }, log: quiet, signer });
    const b = createReceiptLog({ db: plaza.db, log: quiet, signer });
    await write(2);
    const first = (await a.checkpoint())!;
    slow = true;
    const stale = a.checkpoint();
    await new Promise((resolve) => setTimeout(resolve, 100));
    await write(2);
    const second = (await b.checkpoint())!;
    expect(second.treeSize).toBe(first.treeSize + 2);
    const proof = (await a.consistency(first.treeSize, second.treeSize))!.map((h) => Buffer.from(h, 'hex'));
    expect(
      verifyConsistency(
        first.treeSize,
        second.treeSize,
        Buffer.from(first.rootHash, 'hex'),
        Buffer.from(second.rootHash, 'hex'),
        proof,
      ),
    ).toBe(true);
    await stale;
  });

  it('refuses to sign over a receipt altered in the database, and every export says so', async () => {
    const { privateKey, publicKey } = await generateKeyPair('EdDSA', { crv: 'Ed25519', extractable: true });
    const signer = createJwsCheckpointSigner(async () => ({ kid: 'receipts_damage', privateKey }));
    const served = (await (await fetch(`${plaza.url}/.well-known/jwks.json`)).json()) as { keys: never[] };
    const jwks = {
      keys: [
        ...served.keys,
        { ...(await exportJWK(publicKey)), kid: 'receipts_damage', alg: 'EdDSA', purpose: 'receipts' },
      ] as never[],
    };
    await write(2, 'acc_damaged');
    const before = (await createReceiptLog({ db: plaza.db, log: quiet, signer }).checkpoint())!.treeSize;
    await write(3, 'acc_damaged');
    const altered = `cp_${n - 2}`;
    await plaza.db.sql.exec(`UPDATE "receipts" SET "tool" = 'other' WHERE "call_id" = '${altered}'`);
    const log = createReceiptLog({ db: plaza.db, log: quiet, signer });
    await expect(log.checkpoint()).rejects.toThrow(
      new RegExp(`damaged at seq \\d+ \\(${altered}\\): leaf_hash does not match`),
    );
    expect(log.damage()).toMatchObject({ callId: altered });
    // The last good checkpoint stands; none covers the three receipts after it.
    expect((await log.getLatestCheckpoint())?.treeSize).toBe(before);
    // An export against it held only what it covers, and verified: the damage went unsaid.
    for (const accountId of ['acc_damaged', 'acc_export']) {
      const lines: string[] = [];
      for await (const line of log.exportLines({ accountId })) lines.push(line);
      const report = await verifyExport(lines, jwks);
      expect(report.failure, accountId).toMatchObject({ line: 2, seq: Number(log.damage()!.seq) });
      expect(report.failure?.problem).toMatch(
        /^the server found the log damaged at seq \d+ \(leaf_hash does not match the receipt fields\): no checkpoint covers it or any receipt after it$/,
      );
    }

    // The lease loop on the damaged log says so once, then once every 10 minutes while it lasts,
    // not once per tick (every 10 s by default) with a stack trace; the same for exports.
    const said: { level: string; msg: string; err?: unknown }[] = [];
    const recording = {
      info: () => undefined,
      warn: (o: object, msg?: string) => void said.push({ level: 'warn', msg: msg ?? '', ...o }),
      error: (o: object, msg?: string) => void said.push({ level: 'error', msg: msg ?? '', ...o }),
    };
    let offset = 0;
    let reads = 0;
    const clock = { now: () => (reads++, Date.now() + offset) };
    const looping = createReceiptLog({ db: plaza.db, log: recording, signer, clock });
    const stop = looping.startCheckpointing({ intervalMs: 5, owner: 'instance-damaged' });
    try {
      for await (const _ of looping.exportLines({ accountId: 'acc_damaged' })) void _;
      const ticks = async (n: number) => {
        const until = reads + n;
        await expect.poll(() => reads, { timeout: 10_000 }).toBeGreaterThanOrEqual(until);
      };
      await ticks(20);
      for await (const _ of looping.exportLines({ accountId: 'acc_damaged' })) void _;
      expect(said.map((line) => line.msg)).toEqual(['receipt log damaged: checkpoints stopped']);
      offset += 600_000;
      await ticks(20);
      expect(said).toHaveLength(2);
      expect(said[1]).toMatchObject({
        level: 'error',
        msg: expect.stringMatching(/^receipt log damaged: still no checkpoint/),
        call_id: altered,
      });
      expect(said[1]!.err).toBeUndefined();
    } finally {
      await stop();
    }

    // Rows that checkpoint covers deleted: no consistency proof to give (it threw a RangeError, a 500).
    await plaza.db.sql.exec(`DELETE FROM "receipts" WHERE "seq" > (SELECT min("seq") FROM "receipts")`);
    expect(await (await newLog()).consistency(1, before!)).toBeUndefined();
  });
});
