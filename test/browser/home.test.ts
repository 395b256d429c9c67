/**
 * Pins the Home page in real Chromium: the catalog comes from the website API's content in both
 * locales with a switch that sticks, the intent box shows the recommendation, the lead form
 * validates inline, stores a lead and answers a 429 kindly, both forms also work without script,
 * the page has no serious axe
 * violations, runs under the strict CSP without errors, and fits a phone screen.
 */
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import {
  CHROMIUM_PATH,
  describeWithBrowser,
  DESKTOP,
  focusedId,
  freshPage,
  launchChromium,
  overflowsHorizontally,
  PHONE,
  screenshot,
  seriousViolations,
} from '../support/browser.ts';
import { startTestPlaza, type TestPlaza } from '../support/plaza.ts';

let plaza: TestPlaza;
// Undefined without Chromium: the served-HTML tests at the end need none and still run.
let browser: Browser | undefined;

beforeAll(async () => {
  [plaza, browser] = await Promise.all([
    startTestPlaza('pglite', { env: { PLAZA_RATE_LIMIT_LEADS_PER_MIN: '4', PLAZA_BACKGROUND: '0' } }),
    CHROMIUM_PATH === null ? undefined : launchChromium(),
  ]);
  // A package page needs a package: one source that names it.
  const source = await fetch(`${plaza.url}/api/agpk/sources`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      package_id: 'com.example.x',
      name: 'X',
      version: '1.0.0',
      vendor_name: 'Example',
      download_uri: 'https://packages.example.com/x-1.0.0.agpk',
      sha256: 'a'.repeat(64),
    }),
  });
  expect(source.status).toBeLessThan(300);
});
afterAll(async () => {
  await browser?.close();
  await plaza?.close();
});

describeWithBrowser('Home page', () => {
  let context: BrowserContext;
  let page: Page;
  let errors: string[];

  beforeEach(async () => {
    ({ context, page, errors } = await freshPage(browser!, context));
  });

  it('shows the products, scenarios and plans of the website API, and the manifesto', async () => {
    const [products, scenarios, plans] = await Promise.all(
      ['products', 'scenarios', 'plans'].map(
        async (r) => (await fetch(`${plaza.url}/api/${r}?locale=en`)).json() as Promise<any>,
      ),
    );
    await page.goto(`${plaza.url}/`);
    await expect(page.title()).resolves.toContain('Plaza');
    const names = await page.locator('#products-title + ul h3').allTextContents();
    expect(names).toEqual(products.products.map((p: any) => p.name));
    for (const s of scenarios.scenarios)
      await expect(page.locator(`#scenario-${s.id} h3`).textContent()).resolves.toBe(s.name);
    for (const p of plans.plans) {
      await expect(page.locator(`#plan-${p.id} h3`).textContent()).resolves.toBe(p.name);
      await expect(page.locator(`#plan-${p.id} a.button`).getAttribute('href')).resolves.toBe(p.checkoutUrl);
      const label = { start_free: 'Start free', checkout: 'Choose this plan', contact_sales: 'Contact sales' }[
        p.action as string
      ];
      await expect(page.locator(`#plan-${p.id} a.button`).textContent()).resolves.toBe(label);
    }
    expect(await page.locator('.manifesto p').count()).toBeGreaterThan(0);
    expect(await page.locator('main').count()).toBe(1);
    await screenshot(page, 'home');
    expect(errors).toEqual([]);
  });

  it('switches to zh-CN and keeps the language on the next page', async () => {
    const zh = (await (await fetch(`${plaza.url}/api/products?locale=zh-CN`)).json()) as any;
    await page.goto(`${plaza.url}/`);
    await page.getByRole('link', { name: '简体中文' }).click();
    await page.waitForURL(/locale=zh-CN/);
    await expect(page.locator('html').getAttribute('lang')).resolves.toBe('zh-CN');
    await expect(page.locator('#products-title + ul h3').first().textContent()).resolves.toBe(zh.products[0].name);
    await page.getByRole('link', { name: '市场' }).click();
    await page.waitForURL(/\/marketplace$/);
    await expect(page.locator('h1').textContent()).resolves.toBe('MCP 市场');
    await page.getByRole('link', { name: 'English' }).click();
    await expect(page.locator('h1').textContent()).resolves.toBe('MCP Marketplace');
  });

  it('submits an intent and shows the recommendation of POST /api/agent/intent', async () => {
    const prompt = 'We need an audit trail of which agent touched our ERP';
    const expected = (await (
      await fetch(`${plaza.url}/api/agent/intent?locale=en`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ prompt }),
      })
    ).json()) as any;
    await page.goto(`${plaza.url}/`);
    await page.getByLabel('Describe the work you want an agent to do').fill(prompt);
    await page.getByRole('button', { name: 'Recommend' }).click();
    await page.locator('#intent-answer').waitFor();
    await expect(page.locator('#intent-result h3').textContent()).resolves.toBe(expected.scenario.name);
    await expect(page.locator('#intent-answer').textContent()).resolves.toBe(expected.answer);
    // The recommendation preselects the scenario of the lead form.
    await expect(page.locator('#lead-scenario').inputValue()).resolves.toBe(expected.scenario.id);
    expect(errors).toEqual([]);
  });

  it('refuses an empty intent inline without calling the API', async () => {
    await page.goto(`${plaza.url}/`);
    let calls = 0;
    page.on('request', (r) => r.url().includes('/api/agent/intent') && calls++);
    await page.getByRole('button', { name: 'Recommend' }).click();
    await expect(page.locator('#intent-prompt-error').textContent()).resolves.toBe(
      'Please describe what you want to automate.',
    );
    await expect(page.locator('#intent-prompt').getAttribute('aria-invalid')).resolves.toBe('true');
    expect(calls).toBe(0);
  });

  // Runs before the next test: its one stored lead is part of the 4-per-minute budget that test uses up.
  it('works without script: the intent box and the lead form post to the page', async () => {
    const plain = await browser!.newContext({ viewport: DESKTOP, locale: 'en-US', javaScriptEnabled: false });
    const p = await plain.newPage();
    await p.goto(`${plaza.url}/`);
    await p.getByRole('button', { name: 'Recommend' }).click();
    await expect(p.locator('#intent-prompt-error').textContent()).resolves.toBe(
      'Please describe what you want to automate.',
    );
    await p
      .getByLabel('Describe the work you want an agent to do')
      .fill('Sell products through agents in our online store');
    await p.getByRole('button', { name: 'Recommend' }).click();
    await expect(p.locator('#intent-result h3').textContent()).resolves.toBe('Agentic commerce');
    await expect(p.locator('#lead-scenario').inputValue()).resolves.toBe('commerce');

    await p.getByLabel('Work e-mail').fill('nope');
    await p.getByLabel('Company (optional)').fill('Shop & Co');
    await p.getByRole('button', { name: 'Send' }).click();
    await expect(p.locator('#lead-email-error').textContent()).resolves.toBe(
      'Enter a valid e-mail address, like dana@example.com.',
    );
    await expect(p.locator('#lead-email').getAttribute('aria-invalid')).resolves.toBe('true');
    await expect(p.locator('#lead-company').inputValue()).resolves.toBe('Shop & Co');
    await p.getByLabel('Work e-mail').fill('lee@example.com');
    await p.getByRole('button', { name: 'Send' }).click();
    await expect(p.locator('#lead-result').textContent()).resolves.toBe('Thank you — we received your details.');
    expect(await plaza.db.prisma.lead.findFirst({ where: { email: 'lee@example.com' } })).toMatchObject({
      scenario: 'commerce',
      company: 'Shop & Co',
    });
    await plain.close();
  });

  it('validates the lead form inline, stores a lead, then answers a 429 kindly', async () => {
    await page.goto(`${plaza.url}/`);
    const email = page.getByLabel('Work e-mail');
    await email.fill('not-an-email');
    await page.getByRole('button', { name: 'Send' }).click();
    await expect(page.locator('#lead-email-error').textContent()).resolves.toContain('valid e-mail');
    await expect(page.locator('#lead-scenario-error').textContent()).resolves.toBe('Choose a scenario.');
    await expect(focusedId(page)).resolves.toBe('lead-email');

    await email.fill('dana@example.com');
    await page.getByLabel('Scenario', { exact: true }).selectOption('enterprise');
    await page.getByLabel('Company (optional)').fill('Acme <b>Corp</b>');
    await page.getByRole('button', { name: 'Send' }).click();
    await expect(page.locator('#lead-result strong').textContent()).resolves.toBe(
      'Thank you — we received your details.',
    );
    await expect(page.locator('#lead-email').getAttribute('aria-invalid')).resolves.toBeNull();
    const stored = await plaza.db.prisma.lead.findMany();
    expect(stored.filter((l: any) => l.email === 'dana@example.com').map((l: any) => [l.scenario, l.company])).toEqual([
      ['enterprise', 'Acme <b>Corp</b>'],
    ]);

    // The limit is 4 per minute (one used by the script-less test): two more pass (an identical
    // repeat: answered as the first, stored once), the next is a 429.
    for (let i = 0; i < 2; i++) {
      const [answer] = await Promise.all([
        page.waitForResponse((r) => new URL(r.url()).pathname === '/api/leads'),
        page.getByRole('button', { name: 'Send' }).click(),
      ]);
      expect(answer.status()).toBe(201);
      await page.locator('#lead-form button:not([disabled])').waitFor();
      await expect(page.locator('#lead-result strong').textContent()).resolves.toBe(
        'Thank you — we received your details.',
      );
    }
    expect((await plaza.db.prisma.lead.findMany()).filter((l: any) => l.email === 'dana@example.com')).toHaveLength(1);
    await page.locator('#lead-form button:not([disabled])').waitFor();
    await page.getByRole('button', { name: 'Send' }).click();
    await page.locator('#lead-result.warn').waitFor();
    await expect(page.locator('#lead-result').textContent()).resolves.toMatch(
      /Please wait \d+ s and try again — nothing you typed is lost\./,
    );
    await expect(page.locator('#lead-form button').isDisabled()).resolves.toBe(true);
    await expect(email.inputValue()).resolves.toBe('dana@example.com');
    await screenshot(page, 'home-lead-429');
  });

  it('has no serious accessibility violations and fits a phone screen', async () => {
    await page.goto(`${plaza.url}/`);
    expect(await seriousViolations(page)).toEqual([]);
    await page.setViewportSize(PHONE);
    expect(await overflowsHorizontally(page)).toBe(false);
    await screenshot(page, 'home-phone');
    await page.goto(`${plaza.url}/?locale=zh-CN`);
    expect(await seriousViolations(page)).toEqual([]);
    await page.setViewportSize(DESKTOP);
    await screenshot(page, 'home-zh-CN');
  });

  it('can be used with the keyboard: the skip link moves focus to the main content', async () => {
    await page.goto(`${plaza.url}/`);
    await page.keyboard.press('Tab');
    await expect(page.evaluate<string | undefined>('document.activeElement?.textContent')).resolves.toBe(
      'Skip to content',
    );
    await page.keyboard.press('Enter');
    await expect(focusedId(page)).resolves.toBe('main');
  });
});

// The served HTML alone: no browser page to make for each (same names as before: "Home page serves …").
describe('Home page', () => {
  it.each(['/', '/marketplace', '/packages', '/packages/com.example.x', '/assistant', '/receipts', '/account'])(
    'serves %s under a strict CSP with no inline script',
    async (path) => {
      const res = await fetch(`${plaza.url}${path}`, { headers: { accept: 'text/html' } });
      expect(res.status).toBe(200);
      const csp = res.headers.get('content-security-policy') ?? '';
      const scriptSrc = csp
        .split(';')
        .map((d) => d.trim())
        .find((d) => d.startsWith('script-src '));
      expect(scriptSrc).toBe("script-src 'self'");
      const body = await res.text();
      const scripts = [...body.matchAll(/<script\b([^>]*)>/g)].map((m) => m[1]!.trim());
      expect(scripts.length).toBeGreaterThan(0);
      for (const attrs of scripts)
        expect(attrs).toMatch(/^type="module" src="\/assets\/[a-z-]+\.js"$|^type="application\/json" id="page-data"$/);
      expect(body).not.toMatch(/\son[a-z]+=/i);
    },
  );
});
