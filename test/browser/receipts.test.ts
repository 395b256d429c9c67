/**
 * Pins the Receipts view in real Chromium: an account API key lists only that account's receipts
 * with search filters, and each receipt's inclusion proof and checkpoint signature are verified in
 * the browser (WebCrypto) — and fail when the receipt, the proof or the checkpoint is altered on
 * the way, or the checkpoint is signed by a published key of another purpose. No serious axe violations.
 */
import { sign } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';

import { CHECKPOINT_TYP, checkpointText, createReceiptWriter, type ReceiptInput } from '../../receipts/index.ts';
import { createAccountService } from '../../src/accounts/index.ts';
import { systemClock } from '../../src/kernel/index.ts';
import { type ActiveSigningKey, createSigningKeyStore } from '../../src/keys/index.ts';
import {
  describeWithBrowser,
  freshPage,
  launchChromium,
  overflowsHorizontally,
  PHONE,
  screenshot,
  seriousViolations,
  waitUntil,
} from '../support/browser.ts';
import { startTestPlaza, type TestPlaza } from '../support/plaza.ts';

describeWithBrowser('Receipts page', () => {
  let plaza: TestPlaza;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let errors: string[];
  let dir: string;
  let key: string;
  let tokenKey: ActiveSigningKey;

  beforeAll(async () => {
    [plaza, browser] = await Promise.all([
      startTestPlaza('pglite', { env: { PLAZA_BACKGROUND: '0' } }),
      launchChromium(),
    ]);
    dir = await mkdtemp(join(tmpdir(), 'receipts-page-'));
    const accounts = createAccountService({ prisma: plaza.db.prisma, clock: systemClock });
    const mine = await accounts.createAccount({ email: 'auditor@example.com' });
    const other = await accounts.createAccount({ email: 'other@example.com' });
    key = mine.apiKey;
    const writer = createReceiptWriter({
      db: plaza.db,
      log: plaza.log,
      durability: 'sync',
      spoolDir: join(dir, 'spool'),
    });
    const base = Date.parse('2026-11-21T10:00:00.000Z');
    const receipts: ReceiptInput[] = Array.from({ length: 13 }, (_, i) => ({
      callId: `call_${i}`,
      aginId: i % 3 === 0 ? 'agin_x' : 'agin_y',
      agentPrincipal: 'agent:x',
      accountId: i % 2 === 0 ? mine.account.id : other.account.id,
      tool: i % 4 === 0 ? 'search' : 'echo',
      provider: 'everything',
      status: i === 6 ? 'error' : 'ok',
      outcome: i === 6 ? 'upstream timed out' : `ok <b>${i}</b>`,
      latencyMs: 10 + i,
      resultDigest: 'b'.repeat(64),
      time: base + i * 60_000,
    }));
    for (const r of receipts) await writer.write(r);
    await writer.close();
    const latest = await fetch(`${plaza.url}/api/receipts/checkpoints/latest`);
    expect(latest.status).toBe(200);
    tokenKey = await createSigningKeyStore({ prisma: plaza.db.prisma, clock: systemClock }).activeKey('token');
  });
  afterAll(async () => {
    await browser?.close();
    await plaza?.close();
    await rm(dir, { recursive: true, force: true });
  });
  beforeEach(async () => {
    ({ context, page, errors } = await freshPage(browser, context));
  });

  const search = async (filters: Record<string, string> = {}) => {
    await page.goto(`${plaza.url}/receipts`);
    await page.getByLabel('Account API key').fill(key);
    for (const [label, value] of Object.entries(filters)) {
      if (label === 'Status') await page.getByLabel(label).selectOption(value);
      else await page.getByLabel(label).fill(value);
    }
    await page.getByRole('button', { name: 'Search receipts' }).click();
    await page.locator('#receipt-message:not(:empty)').waitFor();
  };
  const shownCalls = () =>
    page
      .locator('#receipt-table tbody tr[data-call-id]')
      .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-call-id')));

  it("lists only the account's receipts and filters them", async () => {
    await search();
    expect(await shownCalls()).toEqual(['call_0', 'call_2', 'call_4', 'call_6', 'call_8', 'call_10', 'call_12']);
    await expect(page.locator('tr[data-call-id="call_2"]').textContent()).resolves.toContain('ok <b>2</b>');
    await search({ Tool: 'search' });
    expect(await shownCalls()).toEqual(['call_0', 'call_4', 'call_8', 'call_12']);
    await search({ Status: 'error' });
    expect(await shownCalls()).toEqual(['call_6']);
    expect(errors).toEqual([]);
  });

  it('verifies a receipt against the signed checkpoint in the browser', async () => {
    await search();
    for (const call of ['call_0', 'call_8', 'call_12']) {
      await page.getByRole('button', { name: `Verify ${call}` }).click();
      const verdict = page.locator(`tr[data-call-id="${call}"] + tr .verdict`);
      await waitUntil(
        page,
        `document.querySelector('tr[data-call-id="${call}"] + tr .verdict')?.getAttribute('data-verified') !== null`,
      );
      await expect(verdict.getAttribute('data-verified')).resolves.toBe('true');
      await expect(verdict.textContent()).resolves.toMatch(
        /^Verified: leaf hash, inclusion proof in a tree of 13 and the checkpoint signature \(key .+\) all hold\.$/,
      );
    }
    await screenshot(page, 'receipts');
    expect(errors).toEqual([]);
  });

  /** The checkpoint signed again, well formed, by the guest-token key (published in the same JWKS). */
  const signedByTokenKey = (d: any) => {
    const cp = d.checkpoint;
    const b64 = (b: string | Buffer) => Buffer.from(b).toString('base64url');
    const header = b64(JSON.stringify({ alg: 'EdDSA', kid: tokenKey.kid, typ: CHECKPOINT_TYP }));
    const payload = b64(
      checkpointText({
        treeSize: cp.tree_size,
        rootHash: cp.root_hash,
        chainHead: cp.chain_head,
        timestamp: Date.parse(cp.timestamp),
      }),
    );
    cp.key_id = tokenKey.kid;
    cp.signature = `${header}..${b64(sign(null, Buffer.from(`${header}.${payload}`), tokenKey.privateKeyObject))}`;
  };

  it.each([
    ['an altered receipt', (d: any) => (d.receipt.outcome = 'ok'), 'the leaf hash does not match the receipt fields'],
    [
      'a checkpoint signed by a key of another purpose',
      signedByTokenKey,
      'the checkpoint is signed by a key that is not a receipts key',
    ],
    [
      'an altered proof',
      (d: any) => (d.inclusion.audit_path[0] = 'f'.repeat(64)),
      'the inclusion proof does not lead to the signed root',
    ],
    [
      'an altered checkpoint',
      (d: any) => (d.checkpoint.timestamp = '2030-01-01T00:00:00.000Z'),
      'the checkpoint signature does not verify',
    ],
  ])('refuses %s', async (_name, alter, reason) => {
    await page.route('**/api/receipts/call_4', async (route) => {
      const response = await route.fetch();
      const body = (await response.json()) as any;
      alter(body.data);
      await route.fulfill({ response, json: body });
    });
    await search();
    await page.getByRole('button', { name: 'Verify call_4' }).click();
    const verdict = page.locator('tr[data-call-id="call_4"] + tr .verdict');
    await waitUntil(
      page,
      `document.querySelector('tr[data-call-id="call_4"] + tr .verdict')?.getAttribute('data-verified') !== null`,
    );
    await expect(verdict.getAttribute('data-verified')).resolves.toBe('false');
    await expect(verdict.textContent()).resolves.toBe(`Not verified: ${reason}`);
  });

  it('explains a refused key', async () => {
    await page.goto(`${plaza.url}/receipts`);
    await page.getByLabel('Account API key').fill('plz_nope_nope');
    await page.getByRole('button', { name: 'Search receipts' }).click();
    await page.locator('#receipt-message:not(:empty)').waitFor();
    await expect(page.locator('#receipt-message').textContent()).resolves.toBe('This API key was not accepted.');
  });

  it('fits a phone with receipts listed and verified: the table scrolls in its own box', async () => {
    await page.setViewportSize(PHONE);
    await search();
    await page.getByRole('button', { name: 'Verify call_2' }).click();
    await page.locator('tr.verdict-row:not([hidden])').first().waitFor();
    // The table's visually hidden labels are absolutely positioned: outside a positioned wrap they
    // widened the whole page (441 px at 375) instead of the table's scroll box.
    expect(await overflowsHorizontally(page)).toBe(false);
    expect(
      await page.evaluate<boolean>(
        `(() => { const w = document.querySelector('.table-wrap'); return w.scrollWidth > w.clientWidth; })()`,
      ),
    ).toBe(true);
  });

  it('has no serious accessibility violations and fits a phone screen', async () => {
    await search();
    await page.getByRole('button', { name: 'Verify call_2' }).click();
    expect(await seriousViolations(page)).toEqual([]);
    await page.setViewportSize(PHONE);
    await page.goto(`${plaza.url}/receipts`);
    expect(await overflowsHorizontally(page)).toBe(false);
    await screenshot(page, 'receipts-phone');
  });
});
