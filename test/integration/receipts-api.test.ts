/**
 * Pins the receipts HTTP surface and the verifier end to end: owner-scoped listing with filters
 * and cursors, strict query validation, one receipt with an inclusion proof that verifies against
 * the signed latest checkpoint, the JSONL export, and `plaza receipts verify` (the real command)
 * passing on an intact export and naming the receipt whose row was altered in the database.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createReceiptWriter, type ReceiptInput, verifyExport } from '../../receipts/index.ts';
import { createAccountService } from '../../src/accounts/index.ts';
import { systemClock } from '../../src/kernel/index.ts';
import { runPlaza } from '../support/cli.ts';
import { BACKENDS } from '../support/databases.ts';
import { startTestPlaza, type TestPlaza } from '../support/plaza.ts';
import { inclusionVerifies } from '../support/receipts.ts';

const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };

describe.each(BACKENDS)('receipts API on %s', (backend) => {
  let plaza: TestPlaza;
  let dir: string;
  let keyA: string;
  let keyB: string;
  let accountA: string;
  const get = (path: string, key?: string) =>
    fetch(`${plaza.url}${path}`, key ? { headers: { authorization: `Bearer ${key}` } } : {});

  beforeAll(async () => {
    plaza = await startTestPlaza(backend);
    dir = await mkdtemp(join(tmpdir(), 'receipts-api-'));
    const accounts = createAccountService({ prisma: plaza.db.prisma, clock: systemClock });
    const a = await accounts.createAccount({ email: 'auditor-a@example.com' });
    const b = await accounts.createAccount({ email: 'auditor-b@example.com' });
    accountA = a.account.id;
    keyA = a.apiKey;
    keyB = b.apiKey;
    const writer = createReceiptWriter({ db: plaza.db, log: quiet, durability: 'sync', spoolDir: join(dir, 'spool') });
    const base = Date.parse('2026-11-21T10:00:00.000Z');
    const receipts: ReceiptInput[] = Array.from({ length: 30 }, (_, i) => ({
      callId: `call_${i}`,
      aginId: i % 3 === 0 ? 'agin_x' : 'agin_y',
      agentPrincipal: 'agent:x',
      accountId: i % 2 === 0 ? accountA : b.account.id,
      tool: i % 5 === 0 ? 'search' : 'echo',
      provider: 'everything',
      status: i % 7 === 0 ? 'error' : 'ok',
      outcome: i % 7 === 0 ? 'upstream timed out' : 'ok',
      latencyMs: i,
      resultDigest: 'b'.repeat(64),
      time: base + i * 60_000,
    }));
    await Promise.all(receipts.map((r) => writer.write(r)));
    await writer.close();
  });
  afterAll(async () => {
    await plaza.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('verifies over HTTP before any checkpoint exists: the export signs the first, with a receipts key made for it', async () => {
    expect((await get('/api/receipts/checkpoints/consistency?first=1&second=1')).status).toBe(404);
    if (backend !== 'pglite') return;
    const ok = await runPlaza(['receipts', 'verify', '--url', plaza.url, '--key', keyA], {});
    expect(ok.stdout, ok.stderr).toMatch(/OK: 15 receipt\(s\) verified against checkpoint tree_size 30/);
  });

  it('lists only the caller account receipts, filtered and paged by cursor', async () => {
    expect((await get('/api/receipts')).status).toBe(401);
    const all = (await (await get('/api/receipts?limit=4', keyA)).json()) as {
      data: { receipts: Array<{ call_id: string; account_id: string }>; next_cursor: string };
    };
    expect(all.data.receipts.map((r) => r.call_id)).toEqual(['call_0', 'call_2', 'call_4', 'call_6']);
    const next = (await (
      await get(`/api/receipts?limit=100&cursor=${all.data.next_cursor}`, keyA)
    ).json()) as typeof all;
    expect(next.data.receipts).toHaveLength(11);
    expect(next.data.next_cursor).toBeNull();
    expect([...all.data.receipts, ...next.data.receipts].every((r) => r.account_id === accountA)).toBe(true);
    const filtered = (await (
      await get('/api/receipts?tool=search&status=ok&since=2026-11-21T10:05:00Z&until=2026-11-21T10:30:00Z', keyA)
    ).json()) as typeof all;
    expect(filtered.data.receipts.map((r) => r.call_id)).toEqual(['call_10', 'call_20']);
    const byAgin = (await (await get('/api/receipts?agin_id=agin_x&status=error', keyA)).json()) as typeof all;
    expect(byAgin.data.receipts.map((r) => r.call_id)).toEqual(['call_0']);
  });

  it.each([
    ['status=maybe'],
    ['since=yesterday'],
    ['limit=0'],
    ['cursor=abc'],
    ['cursor=9999999999999999999'],
    ['colour=red'],
    ['since=2026-11-22T00:00:00Z&until=2026-11-21T00:00:00Z'],
    // Years PostgreSQL has no timestamp for (0000, and 10000 once the offset is applied).
    ['since=0000-01-01T00:00:00Z'],
    ['until=9999-12-31T23:59:59.999-23:59'],
  ])('answers 400 to the bad filter %s', async (query) => {
    for (const path of ['/api/receipts', '/api/receipts/export']) {
      const res = await get(`${path}?${query}`, keyA);
      expect(res.status, path).toBe(400);
      expect(((await res.json()) as { request_id: string }).request_id).toBeTruthy();
    }
  });

  it('returns one receipt with an inclusion proof against the signed checkpoint, to its owner only', async () => {
    expect((await get('/api/receipts/call_4', keyB)).status).toBe(404);
    expect((await get('/api/receipts/nope', keyA)).status).toBe(404);
    const body = (await (await get('/api/receipts/call_4', keyA)).json()) as {
      data: {
        receipt: { call_id: string; leaf_hash: string };
        inclusion: { leaf_index: number; tree_size: number; audit_path: string[] };
        checkpoint: { tree_size: number; root_hash: string };
      };
    };
    expect(body.data.receipt.call_id).toBe('call_4');
    expect(body.data.checkpoint.tree_size).toBe(30);
    const { inclusion, checkpoint, receipt } = body.data;
    expect(inclusionVerifies({ receipt, inclusion, checkpoint })).toBe(true);
    const latest = (await (await get('/api/receipts/checkpoints/latest')).json()) as {
      data: { checkpoint: { tree_size: number; key_id: string } };
    };
    expect(latest.data.checkpoint.tree_size).toBe(30);
    const jwks = (await (await get('/.well-known/jwks.json')).json()) as { keys: Array<{ kid: string }> };
    expect(jwks.keys.map((k) => k.kid)).toContain(latest.data.checkpoint.key_id);
  });

  it('exports JSONL that verifies, and the verifier names a receipt altered in the database', async () => {
    const jwksFile = join(dir, 'jwks.json');
    await writeFile(jwksFile, await (await get('/.well-known/jwks.json')).text());
    const res = await get('/api/receipts/export', keyA);
    expect(res.headers.get('content-type')).toMatch(/^application\/x-ndjson/);
    const good = await res.text();
    expect(good.trim().split('\n')).toHaveLength(16);
    const jwks = await readFile(jwksFile, 'utf8');
    expect(await verifyExport(good.split('\n'), JSON.parse(jwks))).toMatchObject({ ok: true, receipts: 15 });

    if (backend === 'pglite') {
      // The real command against the live server (export and JWKS fetched over HTTP).
      const ok = await runPlaza(['receipts', 'verify', '--url', plaza.url, '--key', keyA], {});
      expect(ok.stdout).toMatch(/OK: 15 receipt\(s\) verified/);
      expect(ok.code).toBe(0);
      // One receipt: its inclusion proof and the checkpoint it leads to.
      const one = await runPlaza(['receipts', 'verify', '--url', plaza.url, '--key', keyA, '--call', 'call_4'], {});
      expect(one.code, one.stderr).toBe(0);
      expect(one.stdout).toMatch(/^OK: the receipt of call_4 verified against checkpoint tree_size \d+/);
      // Another account's receipt is not there for this key.
      const foreign = await runPlaza(['receipts', 'verify', '--url', plaza.url, '--key', keyA, '--call', 'call_1'], {});
      expect(foreign.code).toBe(1);
      expect(foreign.stderr).toMatch(/answered 404: Receipt not found\./);
    }

    await plaza.db.sql.exec(`UPDATE "receipts" SET "outcome" = 'ok' WHERE "call_id" = 'call_14'`);
    const tampered = await (await get('/api/receipts/export', keyA)).text();
    const report = await verifyExport(tampered.split('\n'), JSON.parse(jwks));
    expect(report.failure).toMatchObject({ callId: 'call_14', seq: expect.any(Number) });
    expect(report.failure?.problem).toMatch(/leaf_hash/);

    if (backend !== 'pglite') return;
    // The real command offline, on the file and a JWKS file.
    await writeFile(join(dir, 'tampered.jsonl'), tampered);
    const bad = await runPlaza(['receipts', 'verify', '--file', join(dir, 'tampered.jsonl'), '--jwks', jwksFile], {});
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/FAILED at receipt call_14 \(seq \d+, line \d+\): leaf_hash does not match/);
    const altered = await runPlaza(['receipts', 'verify', '--url', plaza.url, '--key', keyA, '--call', 'call_14'], {});
    expect(altered.code).toBe(1);
    expect(altered.stderr).toMatch(/FAILED at receipt call_14 \(seq \d+, line 2\): leaf_hash does not match/);
  }, 60_000);
});
