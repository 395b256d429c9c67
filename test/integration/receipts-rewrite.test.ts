/**
 * Pins what `plaza receipts verify --trusted` is for: someone with write access to the database
 * (no signing key) rewrites a receipt that a signed checkpoint covers, recomputes the hashes after
 * it and deletes the checkpoints over it; an instance started later signs the rewritten log. The
 * export of it verifies on its own; against the checkpoint the auditor kept from the last
 * verification (--save-checkpoint) it fails, over HTTP and offline (--consistency), while an
 * honest log that grew since passes.
 */
import { copyFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import {
  chainHash,
  createReceiptWriter,
  GENESIS_HASH,
  receiptLeafHash,
  type ReceiptStatus,
} from '../../receipts/index.ts';
import { createAccountService } from '../../src/accounts/index.ts';
import { systemClock } from '../../src/kernel/index.ts';
import { runPlaza } from '../support/cli.ts';
import { BACKENDS, createTestDatabase, type TestDatabase } from '../support/databases.ts';
import { startTestPlaza, type TestPlaza } from '../support/plaza.ts';

const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };

describe.each(BACKENDS)('a receipt log rewritten in the database on %s', (backend) => {
  let database: TestDatabase;
  let plaza: TestPlaza;
  let dir: string;
  let key: string;
  let accountId: string;
  let n = 0;

  const write = async (count: number) => {
    const writer = createReceiptWriter({
      db: database.db,
      log: quiet,
      durability: 'sync',
      spoolDir: join(dir, 'spool'),
    });
    for (let i = 0; i < count; i++) {
      await writer.write({
        callId: `rw_${n++}`,
        aginId: 'agin',
        agentPrincipal: 'agent',
        accountId,
        tool: 't',
        provider: 'p',
        status: 'ok',
        outcome: 'ok',
        latencyMs: 1,
        resultDigest: 'e'.repeat(64),
      });
    }
    await writer.close();
  };
  const verify = (...args: string[]) => runPlaza(['receipts', 'verify', ...args], {});
  const overHttp = (...args: string[]) => verify('--url', plaza.url, '--key', key, ...args);
  const fetched = async (path: string, file: string) => {
    await writeFile(
      join(dir, file),
      await (await fetch(`${plaza.url}${path}`, { headers: { authorization: `Bearer ${key}` } })).text(),
    );
    return join(dir, file);
  };

  beforeAll(async () => {
    database = await createTestDatabase(backend);
    plaza = await startTestPlaza(backend, { db: database.db });
    dir = await mkdtemp(join(tmpdir(), 'receipts-rewrite-'));
    const created = await createAccountService({ prisma: database.db.prisma, clock: systemClock }).createAccount({
      email: 'auditor@example.com',
    });
    key = created.apiKey;
    accountId = created.account.id;
  });
  afterAll(async () => {
    await plaza.close();
    await database.dispose();
    await rm(dir, { recursive: true, force: true });
  });

  it('fails verification against the checkpoint the auditor kept, and passes an honest log that grew', async () => {
    const kept = join(dir, 'checkpoint.json');
    await write(4);
    const first = await overHttp('--save-checkpoint', kept);
    expect(first.code, first.stderr).toBe(0);
    await copyFile(kept, join(dir, 'checkpoint-4.json'));
    await write(4);
    const second = await overHttp('--trusted', kept, '--save-checkpoint', kept);
    expect(second.stdout).toMatch(
      /OK: 8 receipt\(s\) verified against checkpoint tree_size 8 .*, which extends the trusted checkpoint of tree size 4/,
    );

    // The attacker: rw_5 altered, every hash after it recomputed, the checkpoints over it deleted.
    await plaza.close();
    await database.db.sql.exec(
      `UPDATE "receipts" SET "outcome" = 'forged', "status" = 'error' WHERE "call_id" = 'rw_5'`,
    );
    const rows = await database.db.prisma.receipt.findMany({ orderBy: { seq: 'asc' } });
    let prev = GENESIS_HASH;
    for (const r of rows) {
      const leaf = receiptLeafHash({ ...r, status: r.status as ReceiptStatus, time: r.createdAt.getTime() });
      await database.db.prisma.receipt.update({ where: { seq: r.seq }, data: { prevHash: prev, leafHash: leaf } });
      prev = chainHash(prev, leaf);
    }
    await database.db.sql.exec(`DELETE FROM "receipt_checkpoints" WHERE "tree_size" > 4`);
    plaza = await startTestPlaza(backend, { db: database.db });

    const alone = await overHttp();
    expect(alone.stdout, 'the rewritten log alone verifies: nothing to hold it against').toMatch(/OK: 8 receipt\(s\)/);
    const same = await overHttp('--trusted', kept);
    expect(same.code).toBe(1);
    expect(same.stderr).toMatch(
      /FAILED at line 1: checkpoint differs from the trusted checkpoint of tree size 8 \(the log was rewritten\)/,
    );

    await write(2);
    const grown = await overHttp('--trusted', kept);
    expect(grown.stderr).toMatch(
      /FAILED at line 1: checkpoint is not consistent with the trusted checkpoint of tree size 8 \(the log was rewritten\)/,
    );

    // Offline: the export, the JWKS and the consistency proof fetched as files.
    const exported = await fetched('/api/receipts/export', 'export.jsonl');
    const jwks = await fetched('/.well-known/jwks.json', 'jwks.json');
    const offline = (trusted: string, proof: string) =>
      verify('--file', exported, '--jwks', jwks, '--trusted', trusted, '--consistency', proof);
    const rewritten = await offline(
      kept,
      await fetched('/api/receipts/checkpoints/consistency?first=8&second=10', 'consistency-8.json'),
    );
    expect(rewritten.stderr).toMatch(
      /FAILED at line 1: checkpoint is not consistent with the trusted checkpoint of tree size 8/,
    );
    // What the auditor had verified of the first four receipts is untouched: that still holds.
    const prefix = await offline(
      join(dir, 'checkpoint-4.json'),
      await fetched('/api/receipts/checkpoints/consistency?first=4&second=10', 'consistency-4.json'),
    );
    expect(prefix.stdout, prefix.stderr).toMatch(
      /OK: 10 receipt\(s\) verified .*, which extends the trusted checkpoint of tree size 4/,
    );
    const wrongProof = await offline(join(dir, 'checkpoint-4.json'), join(dir, 'consistency-8.json'));
    expect(wrongProof.stderr).toMatch(/is not the consistency proof from tree size 4 to 10/);
  }, 120_000);
});
