/**
 * Pins the Packages pages in real Chromium against a real HTTPS origin (test CA) and the real
 * source worker: a source registered through the form shows its pipeline stage and then healthy;
 * the healthy list and the package page (vendor, trust, install command) follow; a rejected
 * package's page offers no install command and says why; the form's note says whether the visitor
 * registers as a known user; a hostile package name renders as text; the publishing guide is there; no serious axe violations.
 */
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';

import type { SourceWorker } from '../../probes/index.ts';
import { systemClock } from '../../src/kernel/index.ts';
import { createMailer, type Mailer } from '../../src/mail/index.ts';
import { createSourcesWorker } from '../../src/sources/index.ts';
import { createTestTls, startTestMarket, tempDir, type TestMarket } from '../support/agpk.ts';
import {
  describeWithBrowser,
  focusedId,
  freshPage,
  launchChromium,
  overflowsHorizontally,
  PHONE,
  screenshot,
  seriousViolations,
  tableLayout,
} from '../support/browser.ts';
import { startTestPlaza, type TestPlaza } from '../support/plaza.ts';
import { signInThroughLink } from '../support/sign-in.ts';
import { buildPackage, type SmtpSink, startSmtpSink, trustCa } from '../support/sources.ts';

const HOSTILE = `Hello <img src=x onerror="window.__xss=1">`;

describeWithBrowser('Packages pages', () => {
  let plaza: TestPlaza;
  let market: TestMarket;
  let untrust: () => void;
  let tmp: Awaited<ReturnType<typeof tempDir>>;
  let worker: SourceWorker;
  let mailer: Mailer;
  let smtp: SmtpSink;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let errors: string[];

  beforeAll(async () => {
    const tls = await createTestTls();
    untrust = trustCa(tls.caCert);
    smtp = await startSmtpSink();
    [market, tmp, plaza, browser] = await Promise.all([
      startTestMarket(tls),
      tempDir('plaza-pages-'),
      startTestPlaza('pglite', {
        env: {
          PLAZA_ALLOW_PRIVATE_TARGETS: '1',
          PLAZA_BACKGROUND: '0',
          SMTP_URL: smtp.url,
          MAIL_FROM: 'Plaza <plaza@test.example>',
        },
      }),
      launchChromium(),
    ]);
    mailer = createMailer({
      prisma: plaza.db.prisma,
      clock: systemClock,
      log: plaza.log,
      smtpUrl: undefined,
      from: plaza.config.mail.from,
    });
    worker = createSourcesWorker({
      prisma: plaza.db.prisma,
      clock: systemClock,
      log: plaza.log,
      config: plaza.config,
      mailer,
    });
  });
  afterAll(async () => {
    await browser?.close();
    await worker?.close();
    await mailer?.close();
    await plaza?.close();
    await market?.close();
    await smtp?.close();
    await tmp?.dispose();
    untrust?.();
  });
  beforeEach(async () => {
    ({ context, page, errors } = await freshPage(browser, context));
  });

  it('registers a source through the form, shows its stage, then lists it as healthy with its package page', async () => {
    const built = await buildPackage(tmp.path, { id: 'com.example.hello', version: '1.0.0' });
    market.files.set('/hello-1.0.0.agpk', built.path);
    await page.goto(`${plaza.url}/packages`);
    // The list is fetched after the page has loaded: waited for, not read at once.
    await expect.poll(() => page.locator('#sources').textContent()).toBe('No healthy sources yet.');
    await expect(page.locator('#register-intro').textContent()).resolves.toBe(
      'Anonymous registrations are marked as risky-unknown provider; sign in to register as a known user.',
    );
    await page.getByLabel('Package id').fill('com.example.hello');
    await page.getByLabel('Name', { exact: true }).fill(HOSTILE);
    await page.getByLabel('Version').fill('1.0.0');
    await page.getByLabel('Vendor name').fill('Example Inc');
    await page.getByLabel('HTTPS download URI').fill(`${market.url}/hello-1.0.0.agpk`);
    await page.getByLabel('SHA-256 of the file (64 hex characters)').fill(built.sha256);
    await page.getByLabel('Summary').fill('Greets people.');
    await page.getByRole('button', { name: 'Register source' }).click();
    await page.locator('#source-stage[data-status="registered"]').waitFor();
    await expect(page.locator('#source-stage').textContent()).resolves.toBe(
      'Registered. Pipeline stage: registered (registered)',
    );

    const [source] = ((await (await fetch(`${plaza.url}/api/agpk/sources`)).json()) as any).sources;
    expect(source).toMatchObject({ name: HOSTILE, trust: 'risky-unknown', status: 'registered' });
    expect((await worker.checkNow(source.id))?.status).toBe('healthy');
    const healthy = ((await (await fetch(`${plaza.url}/api/agpk/sources`)).json()) as any).sources[0];
    expect(healthy.commands).toEqual([{ id: 'com.example.hello.echo', summary: 'Echo a message back as JSON.' }]);
    // The form keeps following the source until it leaves the pipeline.
    await page.locator('#source-stage[data-status="healthy"]').waitFor({ timeout: 20_000 });
    await expect(page.locator('#source-stage').textContent()).resolves.toBe(
      'Registered. Pipeline stage: healthy (live)',
    );
    // The list on the same page follows: the healthy source is in it without a reload.
    await page.locator('#sources tr[data-package-id="com.example.hello"]').waitFor({ timeout: 5_000 });

    await page.goto(`${plaza.url}/packages`);
    const row = page.locator('#sources tr[data-package-id="com.example.hello"]');
    await row.waitFor();
    await expect(row.locator('td').first().textContent()).resolves.toBe(HOSTILE);
    await expect(row.locator('.badge').textContent()).resolves.toBe('risky-unknown provider');
    expect(await page.evaluate('window.__xss')).toBeUndefined();
    await screenshot(page, 'packages');

    await row.getByRole('link').click();
    await page.waitForURL(/\/packages\/com\.example\.hello$/);
    await page.locator('#package-detail pre').waitFor();
    await expect(page.locator('#package-title').textContent()).resolves.toBe(HOSTILE);
    await expect(page.locator('#package-detail pre').textContent()).resolves.toBe(
      'plaza agpk install com.example.hello',
    );
    // -y is asked of every package without a trusted signature, a signed one whose key is not trusted too.
    await expect(page.locator('#package-detail .hint').textContent()).resolves.toContain(
      'unsigned, or signed by a key you have not trusted',
    );
    await expect(page.locator('#package-detail .facts').textContent()).resolves.toContain('Example Inc');
    await expect(page.locator('#package-detail .facts').textContent()).resolves.toContain('risky-unknown provider');
    // The command surface that passed the gate, as the worker recorded it.
    await expect(page.locator('#package-detail ul.commands li').first().textContent()).resolves.toBe(
      'com.example.hello.echo — Echo a message back as JSON.',
    );
    expect(await page.locator('main img').count()).toBe(0);
    await screenshot(page, 'package');
    expect(errors).toEqual([]);
  });

  it('offers no install command for a rejected package, says why, and shows its registrant without endorsing it', async () => {
    // As the worker leaves a signed-in user's source whose scan found something high-risk.
    await plaza.db.prisma.packageSource.create({
      data: {
        id: 'src_rejected_page',
        packageId: 'com.example.shady',
        name: 'Shady',
        version: '1.0.0',
        vendorName: 'Shady Ltd',
        downloadUri: `${market.url}/shady-1.0.0.agpk`,
        sha256: 'a'.repeat(64),
        trust: 'known-user',
        status: 'rejected',
        stage: 'scan',
        reason: 'high-risk scan verdict: downloads and runs a remote script',
        findings: [{ id: 'download-exec', severity: 'high', file: 'hooks/INSTALL', message: 'downloads and runs' }],
        risk: 'high',
      },
    });
    await page.goto(`${plaza.url}/packages/com.example.shady`);
    await page.locator('#not-installable').waitFor();
    await expect(page.locator('#not-installable').textContent()).resolves.toBe(
      'Not installable: plaza agpk install installs only healthy sources, and this one is rejected (scan).',
    );
    await expect(page.locator('#package-detail').textContent()).resolves.toContain(
      'Reason: high-risk scan verdict: downloads and runs a remote script',
    );
    expect(await page.locator('#package-detail pre').count()).toBe(0);
    expect(await page.locator('#package-detail').textContent()).not.toContain('plaza agpk install com.example.shady');
    // Who registered it stays, in the neutral style, not the healthy green.
    const badge = page.locator('#package-detail .facts .badge');
    await expect(badge.textContent()).resolves.toBe('known in-site user');
    await expect(badge.getAttribute('class')).resolves.toBe('badge');
    expect(await seriousViolations(page)).toEqual([]);
    expect(errors).toEqual([]);
  });

  it('tells a signed-in visitor that what they register is marked as a known user', async () => {
    await signInThroughLink(page, plaza.url, smtp, 'pat@example.com');
    await page.goto(`${plaza.url}/packages`);
    await expect
      .poll(() => page.locator('#register-intro').textContent())
      .toBe('You are signed in: sources you register are marked as known in-site user.');
    await page.goto(`${plaza.url}/packages?locale=zh-CN`);
    await expect
      .poll(() => page.locator('#register-intro').textContent())
      .toBe('你已登录：你登记的来源会标记为站内已知用户。');
    expect(errors).toEqual([]);
  });

  it.each([320, 390, 700, 800, 1280])(
    'keeps the sources list readable %i px wide: the id on at most two lines, no column cut off',
    async (width) => {
      await page.setViewportSize({ width, height: 800 });
      await page.goto(`${plaza.url}/packages`);
      await page.locator('#sources tr[data-package-id="com.example.hello"]').waitFor();
      const layout = await tableLayout(page, '#sources tbody tr');
      // Before, code's overflow-wrap: anywhere let the auto-layout table give the id one letter a line.
      expect(layout.codeLines).toBeLessThanOrEqual(2);
      expect(layout.cutOff).toEqual([]);
    },
  );

  it('checks the form inline before sending', async () => {
    const sources = async () => ((await (await fetch(`${plaza.url}/api/agpk/sources`)).json()) as any).sources;
    const before = (await sources()).length;
    await page.goto(`${plaza.url}/packages`);
    await page.getByLabel('SHA-256 of the file (64 hex characters)').fill('abc');
    await page.getByRole('button', { name: 'Register source' }).click();
    await expect(page.locator('#s-sha256').getAttribute('aria-invalid')).resolves.toBe('true');
    await expect(focusedId(page)).resolves.toBe('s-package_id');
    expect(await sources()).toHaveLength(before);
  });

  it('shows the publishing guide; no serious accessibility violations; fits a phone', async () => {
    await page.goto(`${plaza.url}/packages`);
    await expect(page.locator('.guide li').first().textContent()).resolves.toContain('plaza agpk scaffold');
    expect(await page.locator('.guide li').count()).toBe(6);
    await page.locator('#sources table, #sources p').first().waitFor();
    expect(await seriousViolations(page)).toEqual([]);
    await page.setViewportSize(PHONE);
    expect(await overflowsHorizontally(page)).toBe(false);
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'packages-phone');
    await page.goto(`${plaza.url}/packages/com.example.hello?locale=zh-CN`);
    await page.locator('#package-detail pre').waitFor();
    // Trust, status and stage in the page's language, not the API's values.
    const facts = await page.locator('#package-detail .facts').textContent();
    expect(facts).toContain('未知风险提供方');
    expect(facts).toContain('健康 (已上线)');
    expect(facts).not.toMatch(/risky-unknown|healthy|live/);
    await page.goto(`${plaza.url}/packages?locale=zh-CN`);
    await expect(page.locator('#sources tr[data-package-id="com.example.hello"] .badge').textContent()).resolves.toBe(
      '未知风险提供方',
    );
    await page.goto(`${plaza.url}/packages/com.example.hello?locale=zh-CN`);
    await page.locator('#package-detail pre').waitFor();
    expect(await seriousViolations(page)).toEqual([]);
  });

  // Last: it spends this address's registrations for the minute.
  it('says nothing was registered when the registration limit refuses the form (429)', async () => {
    await page.goto(`${plaza.url}/packages`);
    const refused = { package_id: 'com.example.limited', name: 'x', version: '1.0.0', vendor_name: 'x' };
    for (let i = 0; i < 60; i++) {
      const res = await fetch(`${plaza.url}/api/agpk/sources`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ ...refused, download_uri: 'https://example.com/x.agpk', sha256: 'a'.repeat(64) }),
      });
      await res.body?.cancel();
      if (res.status === 429) break;
    }
    await page.getByLabel('Package id').fill('com.example.limited');
    await page.getByLabel('Name', { exact: true }).fill('Limited');
    await page.getByLabel('Version').fill('1.0.0');
    await page.getByLabel('Vendor name').fill('Example Inc');
    await page.getByLabel('HTTPS download URI').fill(`${market.url}/limited-1.0.0.agpk`);
    await page.getByLabel('SHA-256 of the file (64 hex characters)').fill('b'.repeat(64));
    await page.getByRole('button', { name: 'Register source' }).click();
    await expect
      .poll(() => page.locator('#source-result').textContent())
      .toMatch(/^Too many registrations from this address in a short time: nothing was registered\. Please wait \d+ s/);
    expect(await page.locator('#source-result').textContent()).not.toContain('Registered');
  });
});
