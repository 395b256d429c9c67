/**
 * Pins the Account page in real Chromium: sign-in through a link that a real SMTP server receives,
 * then an API key shown once and an agent with its AGIN card, a package source registered as a
 * known user, sign-out; an agent's gateway token shown once with its login command, agents
 * managed through the session (no API key, a new tab lists them), a lost token replaced; no
 * serious axe violations.
 */
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';

import {
  collectPageErrors,
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
import { signInThroughLink } from '../support/sign-in.ts';
import { type SmtpSink, startSmtpSink } from '../support/sources.ts';

describeWithBrowser('Account page', () => {
  let plaza: TestPlaza;
  let smtp: SmtpSink;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let errors: string[];

  beforeAll(async () => {
    smtp = await startSmtpSink();
    [plaza, browser] = await Promise.all([
      startTestPlaza('pglite', {
        env: {
          PLAZA_BACKGROUND: '0',
          PLAZA_ALLOW_PRIVATE_TARGETS: '1',
          SMTP_URL: smtp.url,
          MAIL_FROM: 'Plaza <plaza@test.example>',
        },
      }),
      launchChromium(),
    ]);
  });
  afterAll(async () => {
    await browser?.close();
    await plaza?.close();
    await smtp?.close();
  });
  beforeEach(async () => {
    ({ context, page, errors } = await freshPage(browser, context));
  });

  it('signs in through the e-mailed link, creates an API key and an agent with its AGIN card', async () => {
    await page.goto(`${plaza.url}/account`);
    await page.locator('#signin-form').getByLabel('E-mail').fill('dana@example.com');
    await page.getByRole('button', { name: 'Send sign-in link' }).click();
    await waitUntil(page, `document.getElementById('account-message')?.textContent?.includes('Check your inbox')`);

    const mail = await smtp.waitFor((m) => m.to.includes('dana@example.com'));
    const link = /https?:\/\/\S+\/sign-in\?token=[\w-]+/.exec(mail.text)?.[0];
    expect(link, mail.text).toBeTruthy();
    // The link names PUBLIC_BASE_URL; the test server listens on an ephemeral port.
    const url = new URL(link!);
    await page.goto(`${plaza.url}${url.pathname}${url.search}`);
    // Opening the link spends nothing (mail scanners open links too); the button signs in.
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.waitForURL(`${plaza.url}/account`);
    await page.locator('#who').waitFor();
    await expect(page.locator('#who').textContent()).resolves.toBe('Signed in as dana@example.com');

    await page.getByRole('button', { name: 'Create API key' }).click();
    const key = (await page.locator('#new-key').textContent())!;
    expect(key).toMatch(/^plz_/);
    const me = await fetch(`${plaza.url}/api/account`, { headers: { authorization: `Bearer ${key}` } });
    expect(((await me.json()) as any).data.account.email).toBe('dana@example.com');
    await page.locator('#key-list li').first().waitFor();

    await page.getByLabel('Display name').fill('Invoice bot <i>1</i>');
    await page.getByRole('button', { name: 'Create agent' }).click();
    const card = page.locator('#agent-list li').first();
    await card.waitFor();
    await expect(card.locator('strong').textContent()).resolves.toBe('Invoice bot <i>1</i>');
    const agents = (
      (await (await fetch(`${plaza.url}/api/agents`, { headers: { authorization: `Bearer ${key}` } })).json()) as any
    ).data.agents;
    const mine = agents.find((a: any) => a.display_name === 'Invoice bot <i>1</i>');
    await expect(card.getAttribute('data-agin-id')).resolves.toBe(mine.agin_id);
    await screenshot(page, 'account');
    expect(await seriousViolations(page)).toEqual([]);

    // Signed in, the package form registers as a known in-site user (session + CSRF token).
    await page.goto(`${plaza.url}/packages`);
    await page.getByLabel('Package id').fill('com.example.known');
    await page.getByLabel('Name', { exact: true }).fill('Known');
    await page.getByLabel('Version').fill('1.0.0');
    await page.getByLabel('Vendor name').fill('Dana Co');
    await page.getByLabel('HTTPS download URI').fill('https://127.0.0.1:9/known-1.0.0.agpk');
    await page.getByLabel('SHA-256 of the file (64 hex characters)').fill('a'.repeat(64));
    await page.getByRole('button', { name: 'Register source' }).click();
    await page.locator('#source-stage').waitFor();
    const [known] = ((await (await fetch(`${plaza.url}/api/agpk/sources?package_id=com.example.known`)).json()) as any)
      .sources;
    expect(known).toMatchObject({ trust: 'known-user', status: 'registered' });
    await page.goto(`${plaza.url}/account`);
    await page.locator('#who').waitFor();

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.locator('#signin:not([hidden])').waitFor();
    expect(
      (
        await fetch(`${plaza.url}/api/auth/session`, {
          headers: { cookie: (await context.cookies()).map((c) => `${c.name}=${c.value}`).join('; ') },
        })
      ).status,
    ).toBe(401);
    expect(errors).toEqual([]);
  });

  /** The gateway's answer to an MCP initialize with `token`: 200, or 401 for a refused credential. */
  async function gatewayStatus(token: string): Promise<number> {
    const body = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
    };
    const res = await fetch(`${plaza.url}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify(body),
    });
    return res.status;
  }

  it('shows a new agent its token once with the login command, with no API key; a new tab lists the agents; a lost token is replaced', async () => {
    await signInThroughLink(page, plaza.url, smtp, 'fay@example.com');
    await page.getByLabel('Display name').fill('Ledger bot');
    await page.getByRole('button', { name: 'Create agent' }).click();
    await page.locator('#new-agent-token').waitFor();
    const token = (await page.locator('#new-agent-token').textContent())!;
    expect(token).toMatch(/^agt_[0-9a-z]{13}_[0-9a-z]{40}$/);
    await expect(page.locator('#agent-token').textContent()).resolves.toContain('shown once, copy it now');
    await expect(page.locator('#agent-login-command').textContent()).resolves.toBe(
      `plaza agents login --token ${token} --url ${plaza.url}`,
    );
    expect(await gatewayStatus(token)).toBe(200);
    await page.locator('#agent-list li', { hasText: 'Ledger bot' }).waitFor();
    expect(await seriousViolations(page)).toEqual([]);
    // No API key was made for it.
    const cookie = (await context.cookies()).map((c) => `${c.name}=${c.value}`).join('; ');
    expect(
      ((await (await fetch(`${plaza.url}/api/account/keys`, { headers: { cookie } })).json()) as any).keys,
    ).toEqual([]);

    // A new tab holds nothing in sessionStorage: the session alone lists the agents.
    const tab = await context.newPage();
    const tabErrors = collectPageErrors(tab);
    await tab.goto(`${plaza.url}/account`);
    await tab.locator('#agent-list li', { hasText: 'Ledger bot' }).waitFor();

    // The token was lost: a new one replaces it, after a confirmation, and the old one stops working.
    tab.once('dialog', (dialog) => void dialog.accept());
    await tab.getByRole('button', { name: 'New token for Ledger bot' }).click();
    await tab.locator('#new-agent-token').waitFor();
    const second = (await tab.locator('#new-agent-token').textContent())!;
    expect(second).toMatch(/^agt_/);
    expect(second).not.toBe(token);
    await expect(tab.locator('#agent-token').textContent()).resolves.toContain('shown once, copy it now');
    expect(await gatewayStatus(token)).toBe(401);
    expect(await gatewayStatus(second)).toBe(200);
    expect(await seriousViolations(tab)).toEqual([]);
    expect(errors).toEqual([]);
    expect(tabErrors).toEqual([]);
  });

  it('sets a password when signed in, then signs in with it; a wrong one is refused; a forgotten one is reset by e-mail', async () => {
    await signInThroughLink(page, plaza.url, smtp, 'erin@example.com');

    // The first password needs no current one.
    await expect(page.locator('#current-password-field').isHidden()).resolves.toBe(true);
    await page.getByLabel('New password').fill('erin has a long password');
    await page.getByRole('button', { name: 'Save password' }).click();
    await waitUntil(
      page,
      `document.getElementById('account-message')?.textContent?.includes('Your password is saved')`,
    );
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.locator('#signin:not([hidden])').waitFor();
    // What the last action said does not stay on screen.
    await expect(page.locator('#account-message').textContent()).resolves.toBe('');

    const form = page.locator('#password-form');
    await form.getByLabel('E-mail').fill('erin@example.com');
    await form.getByLabel('Password').fill('not her password');
    await form.getByRole('button', { name: 'Sign in' }).click();
    await waitUntil(page, `document.getElementById('p-password-error')?.textContent === 'Wrong e-mail or password.'`);
    await form.getByLabel('Password').fill('erin has a long password');
    await form.getByRole('button', { name: 'Sign in' }).click();
    await page.locator('#signed-in:not([hidden])').waitFor();
    await expect(page.locator('#who').textContent()).resolves.toBe('Signed in as erin@example.com');
    // Changing it now asks for the current one.
    await expect(page.locator('#current-password-field').isHidden()).resolves.toBe(false);

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.locator('#signin:not([hidden])').waitFor();
    await form.getByLabel('E-mail').fill('erin@example.com');
    await form.getByRole('button', { name: 'Forgot your password?' }).click();
    await waitUntil(
      page,
      `document.getElementById('account-message')?.textContent?.includes('a reset link is on its way')`,
    );
    const reset = await smtp.waitFor((m) => m.to.includes('erin@example.com') && /reset-password\?token=/.test(m.text));
    expect(reset.text).toMatch(/\/reset-password\?token=rst_/);
    expect(errors).toEqual([]);
    expect(await seriousViolations(page)).toEqual([]);
  });

  it("takes an agent name as long as the API does, shows the API's refusal next to the name, and fits a phone with agents listed", async () => {
    await signInThroughLink(page, plaza.url, smtp, 'long-names@example.com');
    // The field holds exactly what POST /api/agents takes (it refused 121–200 typed characters).
    await page.locator('#g-name').fill('N'.repeat(130));
    await page.getByRole('button', { name: 'Create agent' }).click();
    const card = page.locator('#agent-list li').first();
    await card.waitFor();
    await expect(card.locator('strong').textContent()).resolves.toBe('N'.repeat(120));
    // A refusal (here a value set past the field's limit by script) is said at the field, where the
    // visitor is, not at the top of the page.
    await page.evaluate(`document.getElementById('g-name').value = 'M'.repeat(121)`);
    await page.getByRole('button', { name: 'Create agent' }).click();
    await waitUntil(page, `document.getElementById('g-name-error')?.hidden === false`);
    await expect(page.locator('#g-name-error').textContent()).resolves.toContain('120');
    await expect(page.locator('#g-name').getAttribute('aria-invalid')).resolves.toBe('true');
    await page.locator('#g-name').fill('Short');
    await page.getByRole('button', { name: 'Create agent' }).click();
    await waitUntil(page, `document.getElementById('g-name-error')?.hidden === true`);
    await waitUntil(page, `document.querySelectorAll('#agent-list li').length === 2`);
    // Signed in with agents (an AGIN card's principal is one 70-character word), the page fits a
    // phone: it was 1,500 px wide.
    await page.setViewportSize(PHONE);
    expect(await overflowsHorizontally(page)).toBe(false);
  });

  it("says what is wrong with a field in the language of the page, not the browser's or the API's", async () => {
    await page.goto(`${plaza.url}/account?locale=zh-CN`);
    await page.locator('#signin:not([hidden])').waitFor();
    await page.locator('#a-email').fill('nope');
    await page.locator('#signin-form button[type="submit"]').click();
    await waitUntil(page, `document.getElementById('a-email-error')?.textContent === '请输入有效的电子邮件地址。'`);
    await page.locator('#a-email').fill('');
    await page.locator('#signin-form button[type="submit"]').click();
    await waitUntil(page, `document.getElementById('a-email-error')?.textContent === '请填写此字段。'`);
    // An address the browser takes and the API refuses (no dot in its domain): the API's refusal
    // is said in the page's language, not in the API's English.
    await page.locator('#a-email').fill('a@b');
    await page.locator('#signin-form button[type="submit"]').click();
    await waitUntil(page, `document.getElementById('a-email-error')?.textContent === '请输入有效的电子邮件地址。'`);
    // An English page shows the API's own message.
    await page.goto(`${plaza.url}/account?locale=en`);
    await page.locator('#signin:not([hidden])').waitFor();
    await page.locator('#a-email').fill('a@b');
    await page.locator('#signin-form button[type="submit"]').click();
    await waitUntil(
      page,
      `document.getElementById('a-email-error')?.textContent === 'email must be a valid e-mail address.'`,
    );
  });

  it('shows the sign-in form when signed out, without a failed request; no serious accessibility violations; fits a phone', async () => {
    const failed: string[] = [];
    page.on('response', (response) => {
      if (response.status() >= 400) failed.push(`${response.status()} ${response.url()}`);
    });
    await page.goto(`${plaza.url}/account`);
    await page.locator('#signin:not([hidden])').waitFor();
    expect(failed).toEqual([]);
    expect(await seriousViolations(page)).toEqual([]);
    await page.setViewportSize(PHONE);
    expect(await overflowsHorizontally(page)).toBe(false);
    await screenshot(page, 'account-signin-phone');
  });
});
