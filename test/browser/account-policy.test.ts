/**
 * Pins the Account page's policies in real Chromium (issue 35): an agent's "Policy and limits"
 * adds and removes rules, sets per-provider limits and is removed again, each change saved at once
 * and what the API then holds; a limit that is not one is said at its field and sends nothing; the
 * account's default policy and ceiling, which an agent without its own shows as applied to it. No
 * serious axe violations (en, zh-CN); fits a phone with the panel open.
 */
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';

import {
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
import { signInThroughLink } from '../support/sign-in.ts';
import { type SmtpSink, startSmtpSink } from '../support/sources.ts';

describeWithBrowser('Account page: who agents may call', () => {
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
        env: { PLAZA_BACKGROUND: '0', SMTP_URL: smtp.url, MAIL_FROM: 'Plaza <plaza@test.example>' },
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

  /** Signs `email` in through the e-mailed link and creates an agent `name`; returns its id. */
  async function signInWithAgent(email: string, name: string): Promise<string> {
    await signInThroughLink(page, plaza.url, smtp, email);
    await page.getByLabel('Display name').fill(name);
    await page.getByRole('button', { name: 'Create agent' }).click();
    const item = page.locator('#agent-list li[data-agent-id]', { hasText: name });
    await item.waitFor();
    return (await item.getAttribute('data-agent-id'))!;
  }

  /** What the API holds, read with the page's session cookie. */
  async function api(path: string): Promise<any> {
    const cookie = (await context.cookies()).map((c) => `${c.name}=${c.value}`).join('; ');
    return ((await (await fetch(`${plaza.url}${path}`, { headers: { cookie } })).json()) as any).data;
  }

  it("adds and removes an agent's rules, sets per-provider limits, refuses a bad one at its field, and removes the policy", async () => {
    const agentId = await signInWithAgent('policy-owner@example.com', 'Helper');
    const panel = page.locator(`#agent-list li[data-agent-id="${agentId}"] details.policy`);
    await panel.getByText('Policy and limits').click();
    await panel.locator('.usage').waitFor();
    await expect(panel.locator('.policy-source').textContent()).resolves.toMatch(/No policy of its own/);

    for (const [provider, tool] of [
      ['crm', 'read_*'],
      ['mail', 'send'],
    ]) {
      await panel.getByLabel('Provider', { exact: true }).fill(provider!);
      await panel.getByLabel('Tool', { exact: true }).fill(tool!);
      await panel.getByRole('button', { name: 'Add rule' }).click();
      await panel.locator('.policy-rules li', { hasText: `${provider} / ${tool}` }).waitFor();
    }
    // After a save the focus is back in the provider field, for the next rule.
    expect(await focusedId(page)).toBe(`pol-${agentId}-provider`);
    await panel.getByRole('button', { name: 'Remove rule: Allow mail / send' }).click();
    await expect.poll(() => panel.locator('.policy-rules li').count()).toBe(1);
    await expect(panel.locator('.policy-status').textContent()).resolves.toMatch(/^Saved/);

    await panel.getByLabel('Per provider').fill('crm=5');
    await panel.getByRole('button', { name: 'Save default and limits' }).click();
    await expect(panel.locator(`#pol-${agentId}-per-provider-error`).textContent()).resolves.toBe(
      '"crm=5" is not provider:per minute/per day (whole numbers from 1).',
    );
    expect(await focusedId(page)).toBe(`pol-${agentId}-per-provider`);
    expect((await api(`/api/agents/${agentId}/policy`)).policy.limits).toBeUndefined();

    await panel.getByLabel('Per provider').fill('crm:10/50, mail:/20');
    await panel.getByLabel('Calls per minute').fill('30');
    await panel.getByRole('button', { name: 'Save default and limits' }).click();
    await panel.locator('.usage-row[data-limit="30"]').waitFor();
    expect((await api(`/api/agents/${agentId}/policy`)).policy).toEqual({
      rules: [{ effect: 'allow', provider: 'crm', tool: 'read_*' }],
      limits: { per_minute: 30, per_provider: { crm: { per_minute: 10, per_day: 50 }, mail: { per_day: 20 } } },
    });
    // Every limit has its figures; one with a limit also a meter.
    await expect(panel.locator('.usage-row').allTextContents()).resolves.toEqual([
      'This minute: 0 of 30 calls (30 left)',
      'Today: 0 calls (no limit)',
      'crm, this minute: 0 of 10 calls (10 left)',
      'crm, today: 0 of 50 calls (50 left)',
      'mail, this minute: 0 calls (no limit)',
      'mail, today: 0 of 20 calls (20 left)',
    ]);
    expect(await panel.locator('meter').count()).toBe(4);
    await screenshot(page, 'account-policy');
    expect(await seriousViolations(page)).toEqual([]);
    await page.setViewportSize(PHONE);
    expect(await overflowsHorizontally(page)).toBe(false);
    await page.setViewportSize(DESKTOP);

    await panel.getByRole('button', { name: 'Remove this policy (Helper)' }).click();
    await expect.poll(() => panel.locator('.policy-source').textContent()).toMatch(/No policy of its own/);
    expect((await api(`/api/agents/${agentId}/policy`)).policy).toBeNull();
    expect(errors).toEqual([]);
  });

  it("sets the account's default policy and ceiling, which an agent without its own shows as applied", async () => {
    const agentId = await signInWithAgent('policy-defaults@example.com', 'Reader');
    const defaults = page.locator('#account-policy');
    await defaults.getByLabel('Effect').selectOption('deny');
    await defaults.getByLabel('Provider', { exact: true }).fill('*');
    await defaults.getByLabel('Tool', { exact: true }).fill('*');
    await defaults.getByLabel('Applies to').selectOption('destructiveHint');
    await defaults.getByRole('button', { name: 'Add rule' }).click();
    await defaults.locator('.policy-rules li').waitFor();

    await page.locator('#ceiling-per-minute').fill('lots');
    await page.locator('#ceiling-form').getByRole('button', { name: 'Save ceiling' }).click();
    await expect(page.locator('#ceiling-per-minute-error').textContent()).resolves.toBe(
      'A whole number from 1, or empty for no limit.',
    );
    expect(await focusedId(page)).toBe('ceiling-per-minute');
    await page.locator('#ceiling-per-minute').fill('');
    await page.locator('#ceiling-per-day').fill('1000');
    await page.locator('#ceiling-form').getByRole('button', { name: 'Save ceiling' }).click();
    await expect.poll(() => page.locator('#account-policy-status').textContent()).toMatch(/^Saved/);
    expect(await api('/api/account/agent-policy')).toMatchObject({
      default_policy: { rules: [{ effect: 'deny', provider: '*', tool: '*', annotations: { destructiveHint: true } }] },
      limits: { per_day: 1000 },
    });

    const panel = page.locator(`#agent-list li[data-agent-id="${agentId}"] details.policy`);
    await panel.getByText('Policy and limits').click();
    await panel.locator('.usage').waitFor();
    await expect(panel.locator('ul[aria-label="What the gateway applies to Reader"]').textContent()).resolves.toBe(
      'Deny * / * — only tools with destructiveHint = true',
    );
    expect(await seriousViolations(page)).toEqual([]);

    await page.goto(`${plaza.url}/account?locale=zh-CN`);
    const zh = page.locator(`#agent-list li[data-agent-id="${agentId}"] details.policy`);
    await zh.getByText('策略与限额').click();
    await zh.locator('.usage').waitFor();
    await expect(zh.locator('.usage-row').first().textContent()).resolves.toBe('本分钟：已调用 0 次（无限额）');
    expect(await seriousViolations(page)).toEqual([]);
    expect(errors).toEqual([]);
  });
});
