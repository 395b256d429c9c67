/**
 * Pins the Assistant page in real Chromium: it takes a guest token, streams a chat completion from
 * the embedded assistant (the answer grows in several steps, not in one piece), keeps the token for
 * the tab, answers in Chinese on the zh-CN page, and has no serious axe violations.
 */
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';

import {
  describeWithBrowser,
  freshPage,
  launchChromium,
  overflowsHorizontally,
  PHONE,
  screenshot,
  seriousViolations,
} from '../support/browser.ts';
import { startTestPlaza, type TestPlaza } from '../support/plaza.ts';

describeWithBrowser('Assistant page', () => {
  let plaza: TestPlaza;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let errors: string[];

  beforeAll(async () => {
    [plaza, browser] = await Promise.all([
      startTestPlaza('pglite', { env: { PLAZA_BACKGROUND: '0' } }),
      launchChromium(),
    ]);
  });
  afterAll(async () => {
    await browser?.close();
    await plaza?.close();
  });
  beforeEach(async () => {
    ({ context, page, errors } = await freshPage(browser, context));
  });

  it('takes a guest token and streams the answer into the chat', async () => {
    const requests: { url: string; body: string | null; auth: string | undefined }[] = [];
    page.on('request', (r) => requests.push({ url: r.url(), body: r.postData(), auth: r.headers()['authorization'] }));
    await page.goto(`${plaza.url}/assistant`);
    // Count how often the answer's text changes while it streams.
    await page.evaluate(`window.__updates = 0;
      new MutationObserver((records) => (window.__updates += records.length)).observe(document.getElementById('chat-log'), { subtree: true, childList: true, characterData: true });`);
    await page.getByLabel('Your question').fill('Which plan fits a team of 10?');
    await page.getByRole('button', { name: 'Ask' }).click();
    await page.locator('.from-bot[data-done="true"]').waitFor();
    const answer = (await page.locator('.from-bot .text').textContent())!;
    expect(answer.length).toBeGreaterThan(40);
    expect(await page.evaluate<number>('window.__updates')).toBeGreaterThan(3);
    await expect(page.locator('.from-user .text').textContent()).resolves.toBe('Which plan fits a team of 10?');

    const tokenCalls = requests.filter((r) => r.url.endsWith('/api/auth/guest-token'));
    const chat = requests.filter((r) => r.url.endsWith('/api/v1/chat/completions'));
    expect(tokenCalls).toHaveLength(1);
    expect(chat).toHaveLength(1);
    expect(JSON.parse(chat[0]!.body!)).toMatchObject({
      model: 'plaza-assistant',
      stream: true,
      messages: [{ role: 'user', content: 'Which plan fits a team of 10?' }],
    });
    expect(chat[0]!.auth).toMatch(/^Bearer ey/);

    // A follow-up reuses the token and sends the conversation so far.
    await page.getByLabel('Your question').fill('And what does it cost?');
    await page.getByLabel('Your question').press('Enter');
    await page.locator('.from-bot[data-done="true"]').nth(1).waitFor();
    const second = requests.filter((r) => r.url.endsWith('/api/v1/chat/completions'))[1]!;
    expect(JSON.parse(second.body!).messages.map((m: any) => m.role)).toEqual(['user', 'assistant', 'user']);
    expect(requests.filter((r) => r.url.endsWith('/api/auth/guest-token'))).toHaveLength(1);
    await screenshot(page, 'assistant');
    expect(errors).toEqual([]);
  });

  it('answers in Chinese on the zh-CN page', async () => {
    await page.goto(`${plaza.url}/assistant?locale=zh-CN`);
    await page.getByLabel('你的问题').fill('有哪些方案？');
    await page.getByRole('button', { name: '提问' }).click();
    await page.locator('.from-bot[data-done="true"]').waitFor();
    expect(await page.locator('.from-bot .text').textContent()).toMatch(/\p{Script=Han}/u);
  });

  it('has no serious accessibility violations and fits a phone screen', async () => {
    await page.goto(`${plaza.url}/assistant`);
    expect(await seriousViolations(page)).toEqual([]);
    await page.setViewportSize(PHONE);
    expect(await overflowsHorizontally(page)).toBe(false);
    await page.getByLabel('Your question').fill('What is AGIN?');
    await page.getByRole('button', { name: 'Ask' }).click();
    await page.locator('.from-bot[data-done="true"]').waitFor();
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'assistant-phone');
  });
});
