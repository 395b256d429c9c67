/**
 * MCP authorization in real Chromium (issue 34): the SDK v2 client connects to `/mcp/p/<provider>`
 * with no token and hands over its authorization URL; the browser is sent to sign in, signs in
 * through the link a real SMTP server receives, comes back to the consent page (no serious axe
 * violations), creates an agent and allows; the redirect reaches the client's loopback address
 * (through the page's CSP), the client redeems the code and calls the provider, which sees the new
 * agent's AGIN card. The Account page then lists the client under the agent; Disconnect ends its token.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

import { Client, StreamableHTTPClientTransport, UnauthorizedError } from '@modelcontextprotocol/client';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';

import { createAccountService } from '../../src/accounts/index.ts';
import { systemClock } from '../../src/kernel/index.ts';
import {
  collectPageErrors,
  describeWithBrowser,
  DESKTOP,
  launchChromium,
  screenshot,
  seriousViolations,
} from '../support/browser.ts';
import { freePort } from '../support/cli.ts';
import { type SdkUpstream, startSdkUpstream } from '../support/mcp-upstreams.ts';
import { MemoryOAuthProvider } from '../support/oauth-client.ts';
import { startTestPlaza, type TestPlaza } from '../support/plaza.ts';
import { type SmtpSink, startSmtpSink } from '../support/sources.ts';

describeWithBrowser('MCP client sign-in in the browser', () => {
  let plaza: TestPlaza;
  let smtp: SmtpSink;
  let upstream: SdkUpstream;
  let browser: Browser;

  beforeAll(async () => {
    const port = await freePort();
    smtp = await startSmtpSink();
    [plaza, browser, upstream] = await Promise.all([
      startTestPlaza('pglite', {
        port,
        env: {
          PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
          PLAZA_ALLOW_PRIVATE_TARGETS: '1',
          SMTP_URL: smtp.url,
          MAIL_FROM: 'Plaza <plaza@test.example>',
        },
      }),
      launchChromium(),
      startSdkUpstream(),
    ]);
    const { apiKey } = await createAccountService({ prisma: plaza.db.prisma, clock: systemClock }).createAccount({
      email: 'lee@example.com',
    });
    const listed = await fetch(`${plaza.url}/api/mcp/listings`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        provider: 'echoes',
        url: upstream.url,
        registered_by: 'lee@example.com',
        agin_support: true,
        summary: 'Echo provider for the browser OAuth test.',
      }),
    });
    const { id } = (await listed.json()) as { id: string };
    let status = 'registered';
    for (let i = 0; i < 100 && status !== 'healthy'; i++) {
      await new Promise((r) => setTimeout(r, 100));
      status = ((await (await fetch(`${plaza.url}/api/mcp/endpoints/${id}`)).json()) as { status: string }).status;
    }
    expect(status).toBe('healthy');
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await upstream?.close();
    await plaza?.close();
    await smtp?.close();
  });

  it('signs in by e-mail link, creates an agent on the consent page and allows; the client calls as that agent', async () => {
    // The client's loopback listener (RFC 8252), where the browser lands with the code.
    let callback: URL | undefined;
    const listener = createServer((req, res) => {
      callback = new URL(req.url ?? '/', 'http://127.0.0.1');
      res.writeHead(200, { 'content-type': 'text/plain' }).end('You can close this window.');
    });
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
    const provider = new MemoryOAuthProvider({
      redirect: `http://127.0.0.1:${(listener.address() as AddressInfo).port}/callback`,
      clientName: 'Browser test client',
    });
    const url = new URL(`${plaza.url}/mcp/p/echoes`);
    const first = new StreamableHTTPClientTransport(url, { authProvider: provider });
    await expect(new Client({ name: 'browser-oauth', version: '1' }).connect(first)).rejects.toBeInstanceOf(
      UnauthorizedError,
    );

    const context = await browser.newContext({ viewport: DESKTOP, locale: 'en-US' });
    const page = await context.newPage();
    const errors = collectPageErrors(page);
    await page.goto(provider.authorizationUrl!.href);
    // Not signed in: the Account page, which comes back once signed in.
    await page.waitForURL(/\/account\?next=%2Fconnect%2F/);
    await page.locator('#signin-form').getByLabel('E-mail').fill('lee@example.com');
    await page.getByRole('button', { name: 'Send sign-in link' }).click();
    const mail = await smtp.waitFor((m) => m.to.includes('lee@example.com'));
    const link = /https?:\/\/\S+\/sign-in\?token=[\w-]+/.exec(mail.text)?.[0];
    expect(link, mail.text).toBeTruthy();
    await page.goto(link!);
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.waitForURL(/\/connect\/[\w-]+$/);

    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe(
      'Connect Browser test client to Plaza',
    );
    await page.getByLabel('A new agent').check();
    await page.getByLabel("New agent's display name").fill('Laptop assistant');
    await page.getByLabel("New agent's owner context (optional)").fill('lee-at-home');
    await screenshot(page, 'oauth-consent');
    expect(await seriousViolations(page)).toEqual([]);
    await page.getByRole('button', { name: 'Allow' }).click();
    for (let i = 0; i < 100 && !callback; i++) await new Promise((r) => setTimeout(r, 50));
    expect(callback?.searchParams.get('code')).toBeTruthy();
    await new Promise<void>((resolve) => listener.close(() => resolve()));

    await first.finishAuth(callback!.searchParams);
    const client = new Client({ name: 'browser-oauth', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(url, { authProvider: provider }));
    const result = await client.callTool({ name: 'echo', arguments: { message: 'from the browser flow' } });
    await client.close();
    expect(result.content).toEqual([{ type: 'text', text: 'echo: from the browser flow' }]);
    const seen = upstream.seen.filter((s) => s.body?.method === 'tools/call').at(-1);
    expect(seen?.body.params._meta.platform).toMatchObject({
      display_name: 'Laptop assistant',
      owner_context: 'lee-at-home',
    });

    // The Account page lists the client under the agent, and Disconnect ends its tokens.
    await page.goto(`${plaza.url}/account`);
    const connected = page.locator('#agent-list .connected-clients li').first();
    await connected.waitFor();
    await expect(connected.textContent()).resolves.toContain('Connected: Browser test client');
    expect(await seriousViolations(page)).toEqual([]);
    await page.getByRole('button', { name: 'Disconnect Browser test client from Laptop assistant' }).click();
    await page.locator('#account-message', { hasText: 'Browser test client is disconnected' }).waitFor();
    await page.locator('#agent-list .connected-clients').waitFor({ state: 'detached' });
    expect(errors).toEqual([]);
    await context.close();
    const refused = await fetch(url, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${provider.saved!.access_token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: '{"jsonrpc":"2.0","id":1,"method":"ping"}',
    });
    const status = refused.status;
    expect(status).toBe(401);
  });
});
