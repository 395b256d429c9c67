/**
 * Pins the gateway for MCP clients that run in a web page (real Chromium, the page on another
 * origin than Plaza): a CORS preflight lets the MCP headers through, and the answer exposes
 * `Mcp-Session-Id` and `MCP-Protocol-Version`, so a browser client can keep its session on
 * `/mcp/p/<provider>` as the SDK's StreamableHTTPClientTransport does (it reads the session id from
 * the initialize answer's headers and sends it on every later request).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';

import { createAccountService } from '../../src/accounts/index.ts';
import { createAgentService } from '../../src/agents/index.ts';
import { systemClock } from '../../src/kernel/index.ts';
import { describeWithBrowser, freshPage, launchChromium } from '../support/browser.ts';
import { type SdkUpstream, startSdkUpstream } from '../support/mcp-upstreams.ts';
import { startTestPlaza, type TestPlaza } from '../support/plaza.ts';

describeWithBrowser('MCP gateway from a web page on another origin', () => {
  let plaza: TestPlaza;
  let browser: Browser;
  let context: BrowserContext | undefined;
  let page: Page;
  let upstream: SdkUpstream;
  let site: Server;
  let siteUrl = '';
  let token = '';

  beforeAll(async () => {
    [plaza, browser, upstream] = await Promise.all([
      startTestPlaza('pglite', { env: { PLAZA_BACKGROUND: '0', PLAZA_ALLOW_PRIVATE_TARGETS: '1' } }),
      launchChromium(),
      startSdkUpstream(),
    ]);
    const account = await createAccountService({ prisma: plaza.db.prisma, clock: systemClock }).createAccount({
      email: 'browser-agent@example.com',
    });
    token = (
      await createAgentService({ prisma: plaza.db.prisma, clock: systemClock }).create(account.account.id, {
        display_name: 'Browser agent',
      })
    ).token;
    const listed = await fetch(`${plaza.url}/api/mcp/listings`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        provider: 'webtools',
        url: upstream.url,
        registered_by: 'ops@example.com',
        agin_support: true,
        summary: 'Echoes what it is sent.',
      }),
    });
    const { id } = (await listed.json()) as { id: string };
    for (let i = 0; i < 200; i++) {
      if (
        ((await (await fetch(`${plaza.url}/api/mcp/endpoints/${id}`)).json()) as { status: string }).status ===
        'healthy'
      )
        break;
      await new Promise((r) => setTimeout(r, 100));
    }
    // The page's origin: another port, so every request to Plaza is cross-origin.
    site = createServer((_req, res) =>
      res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>agent</title><p>agent page</p>'),
    );
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
    siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}/`;
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    site?.close();
    await upstream?.close();
    await plaza?.close();
  });

  it('keeps a session on /mcp/p/<provider>: the session id is readable, and the preflight takes the MCP headers', async () => {
    ({ context, page } = await freshPage(browser, context));
    await page.goto(siteUrl);
    const outcome = await page.evaluate(
      async ({ gateway, token }) => {
        const base = {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
        };
        const messages = async (res: Response) => {
          const text = await res.text();
          return (res.headers.get('content-type') ?? '').includes('text/event-stream')
            ? text
                .split('\n')
                .filter((line) => line.startsWith('data: '))
                .map((line) => JSON.parse(line.slice(6)))
            : [JSON.parse(text)];
        };
        const init = await fetch(gateway, {
          method: 'POST',
          headers: base,
          body: JSON.stringify({
            jsonrpc: '2.0',
            id: 0,
            method: 'initialize',
            params: {
              protocolVersion: '2025-06-18',
              capabilities: {},
              clientInfo: { name: 'browser-agent', version: '1' },
            },
          }),
        });
        const session = init.headers.get('mcp-session-id');
        await messages(init);
        const inSession = { ...base, 'mcp-session-id': session ?? '', 'mcp-protocol-version': '2025-06-18' };
        const notified = await fetch(gateway, {
          method: 'POST',
          headers: inSession,
          body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
        });
        const call = await fetch(gateway, {
          method: 'POST',
          headers: inSession,
          body: JSON.stringify({
            jsonrpc: '2.0',
            id: 1,
            method: 'tools/call',
            params: { name: 'echo', arguments: { message: 'from a page' } },
          }),
        });
        return { session, notified: notified.status, call: call.status, answers: await messages(call) };
      },
      { gateway: `${plaza.url}/mcp/p/webtools`, token },
    );
    expect(outcome.session).toMatch(/\S{16,}/);
    expect(outcome.notified).toBe(202);
    expect(outcome.call).toBe(200);
    expect(outcome.answers[0]).toMatchObject({
      id: 1,
      result: {
        content: [{ type: 'text', text: 'echo: from a page' }],
        _meta: { platform: { call_id: expect.stringMatching(/^call_/) } },
      },
    });
  });

  it('lets a page read why it was refused: WWW-Authenticate is exposed on a 401', async () => {
    ({ context, page } = await freshPage(browser, context));
    await page.goto(siteUrl);
    const challenge = await page.evaluate(async (gateway) => {
      const res = await fetch(gateway, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: '{}',
      });
      return { status: res.status, challenge: res.headers.get('www-authenticate') };
    }, `${plaza.url}/mcp`);
    expect(challenge).toEqual({ status: 401, challenge: expect.stringMatching(/^Bearer realm="plaza"/) });
  });
});
