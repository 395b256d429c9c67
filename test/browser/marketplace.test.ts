/**
 * Pins the Marketplace pages in real Chromium against a real Plaza and a live server-everything:
 * a listing made through the form is probed and its tools appear as the result arrives; tool search
 * (live and as a plain GET form); health badges and required-credential notes; the endpoint page
 * with its probe-history chart; attacker-controlled listing text renders as text; inline
 * validation and a 409; no serious axe violations; phone width.
 */
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';

import { createProber } from '../../probes/index.ts';
import { systemClock } from '../../src/kernel/index.ts';
import { createProbeStore } from '../../src/marketplace/index.ts';
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
  tableLayout,
  waitUntil,
} from '../support/browser.ts';
import {
  type EverythingServer,
  type FixtureProvider,
  type SdkUpstream,
  startEverything,
  startFixtureProvider,
  startSdkUpstream,
} from '../support/mcp-upstreams.ts';
import { startTestPlaza, type TestPlaza } from '../support/plaza.ts';

const XSS = `<img src=x onerror="window.__xss='img'"><script>window.__xss='script'</script>"'&`;

describeWithBrowser('Marketplace pages', () => {
  let plaza: TestPlaza;
  let everything: EverythingServer;
  let fixture: FixtureProvider;
  let gated: SdkUpstream;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let errors: string[];
  let dialogs: string[];

  const list = async (body: Record<string, unknown>) => {
    const res = await fetch(`${plaza.url}/api/mcp/listings`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as any };
  };
  const waitOnline = async (id: string) => {
    for (let i = 0; i < 100; i++) {
      const res = (await (await fetch(`${plaza.url}/api/mcp/endpoints/${id}`)).json()) as any;
      if (res.status === 'healthy') return res;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error('endpoint did not become healthy');
  };

  beforeAll(async () => {
    [plaza, everything, gated, fixture, browser] = await Promise.all([
      startTestPlaza('pglite', { env: { PLAZA_ALLOW_PRIVATE_TARGETS: '1', PLAZA_BACKGROUND: '0' } }),
      startEverything(),
      startSdkUpstream({ requireBearer: 'gated-secret' }),
      startFixtureProvider([
        [
          {
            name: 'forecast',
            description: `Forecast by city. ${XSS}`,
            inputSchema: { type: 'object', properties: {} },
            annotations: { platform: { requires_agin: true, caller_identity: 'AGIN card of the calling agent' } },
          },
        ],
      ]),
      launchChromium(),
    ]);
    const created = await list({
      provider: 'weather-co',
      url: fixture.url,
      registered_by: 'ops@weather.example',
      agin_support: true,
      summary: `Forecasts. ${XSS}`,
      audience: XSS,
      required_credentials: [{ name: 'Authorization', description: 'Weather API token' }],
    });
    expect(created.status).toBe(201);
    await waitOnline(created.body.id);
  });
  afterAll(async () => {
    await browser?.close();
    await Promise.all([everything?.stop(), fixture?.close(), gated?.close()]);
    await plaza?.close();
  });
  beforeEach(async () => {
    ({ context, page, errors } = await freshPage(browser, context));
    dialogs = [];
    page.on('dialog', (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
  });

  it('registers server-everything through the form, shows the probe result as it arrives, and its tools appear', async () => {
    await page.goto(`${plaza.url}/marketplace`);
    expect(await page.locator('.tool[data-provider="everything"]').count()).toBe(0);
    await page.getByLabel('Provider slug').fill('everything');
    await page.getByLabel('Streamable-HTTP endpoint URL').fill(everything.url);
    await page.getByLabel('Your e-mail (accountable publisher)').fill('ops@example.com');
    await page.getByLabel('Capability summary').fill('Reference server: echo, sums, images. No credentials required.');
    await page.getByLabel('Accepts and logs AGIN-carrying calls').check();
    await page.getByRole('button', { name: 'List endpoint' }).click();
    await page.locator('#probe-status[data-status="healthy"]').waitFor({ timeout: 30_000 });
    const api = (await (await fetch(`${plaza.url}/api/mcp/tools?provider=everything&limit=100`)).json()) as any;
    expect(api.tools.length).toBeGreaterThan(3);
    await expect(page.locator('#probe-status').textContent()).resolves.toBe(
      `Healthy: ${api.tools.length} tools online.`,
    );
    // The tool list was refreshed in place: server-everything's tools are on the page without a reload.
    await page.locator('.tool[data-provider="everything"][data-tool="echo"]').waitFor();
    const shown = await page
      .locator('.tool[data-provider="everything"]')
      .evaluateAll((nodes) => nodes.map((n) => n.getAttribute('data-tool')));
    expect(shown.sort()).toEqual(api.tools.map((t: any) => t.tool).sort());
    await expect(page.locator('.tool[data-tool="echo"] .badge').textContent()).resolves.toBe('healthy');
    await screenshot(page, 'marketplace-listed');
    expect(errors).toEqual([]);
  });

  it('explains a listed server that needs a credential of each caller, after its first probe', async () => {
    await page.goto(`${plaza.url}/marketplace`);
    await page.getByLabel('Provider slug').fill('gated-crm');
    await page.getByLabel('Streamable-HTTP endpoint URL').fill(gated.url);
    await page.getByLabel('Your e-mail (accountable publisher)').fill('ops@crm.example');
    await page.getByLabel('Capability summary').fill('CRM records. Needs Authorization: Bearer <CRM token>.');
    await page.getByRole('button', { name: 'List endpoint' }).click();
    await page.locator('#probe-status[data-status="auth_required"]').waitFor({ timeout: 30_000 });
    await expect(page.locator('#probe-status').textContent()).resolves.toBe(
      "Up, and it needs each caller's own credential (HTTP 401): its tools are not listed, and agents that bring the credential reach it on /mcp/p/gated-crm with X-PLATFORM-Upstream-Authorization.",
    );
    // Not an error: the server answered.
    expect(await page.locator('#listing-result').getAttribute('class')).toBe('result');
    await page.goto(`${plaza.url}/marketplace`);
    await expect(
      page.locator('#endpoint-table tr', { hasText: 'gated-crm' }).locator('.badge').textContent(),
    ).resolves.toBe('needs credentials');
    expect(errors).toEqual([]);
  });

  it('searches tools live and through the plain GET form', async () => {
    await page.goto(`${plaza.url}/marketplace`);
    const before = await page.locator('.tool').count();
    await page.getByLabel('Tool, provider or description').fill('forecast');
    await waitUntil(page, `document.querySelectorAll('.tool').length === 1`);
    await expect(page.locator('.tool').getAttribute('data-tool')).resolves.toBe('forecast');
    expect(page.url()).toContain('q=forecast');
    expect(before).toBeGreaterThan(1);
    // Without script: the same search as a URL renders on the server.
    const res = await fetch(`${plaza.url}/marketplace?q=echo`);
    const body = await res.text();
    expect(body).toContain('data-tool="echo"');
    expect(body).not.toContain('data-tool="forecast"');
    // Provider filter
    await page.goto(`${plaza.url}/marketplace?provider=weather-co`);
    await expect(
      page.locator('.tool').evaluateAll((n) => n.map((x) => x.getAttribute('data-provider'))),
    ).resolves.toEqual(['weather-co']);
    await expect(page.locator('#provider').inputValue()).resolves.toBe('weather-co');
  });

  it('shows health badges, the AGIN requirement and required-credential notes', async () => {
    await page.goto(`${plaza.url}/marketplace?q=forecast`);
    const card = page.locator('.tool[data-tool="forecast"]');
    await expect(card.locator('.badge').textContent()).resolves.toBe('healthy');
    await expect(card.locator('.note').textContent()).resolves.toBe(
      'Requires an AGIN card — AGIN card of the calling agent',
    );
    await expect(card.getByText('Required credentials:').locator('..').textContent()).resolves.toBe(
      'Required credentials: Authorization (Weather API token)',
    );
  });

  it('renders attacker-controlled listing and tool text as text', async () => {
    await page.goto(`${plaza.url}/marketplace?q=forecast`);
    await expect(page.locator('.tool[data-tool="forecast"]').textContent()).resolves.toContain(XSS);
    const endpointHref = await page.locator('.tool[data-tool="forecast"] a').getAttribute('href');
    await page.goto(`${plaza.url}${endpointHref}`);
    await expect(page.locator('#endpoint-facts').textContent()).resolves.toContain(`Forecasts. ${XSS}`);
    expect(await page.evaluate('window.__xss')).toBeUndefined();
    expect(await page.locator('main img, main script').count()).toBe(0);
    expect(dialogs).toEqual([]);
  });

  it('shows an endpoint with its probe history as a chart and a table', async () => {
    const id = ((await (await fetch(`${plaza.url}/api/mcp/endpoints?provider=weather-co`)).json()) as any).endpoints[0]
      .id as string;
    const prober = createProber({
      store: createProbeStore(plaza.db.prisma),
      clock: systemClock,
      log: plaza.log,
      baseIntervalS: 300,
      allowPrivateTargets: true,
      timeoutMs: 5_000,
    });
    for (let i = 0; i < 5; i++) await prober.probeNow(id);
    await prober.close();
    await page.goto(`${plaza.url}/marketplace/endpoints/${id}`);
    await expect(page.locator('h1').textContent()).resolves.toContain('weather-co');
    const rows = await page.locator('#probe-table tbody tr').count();
    expect(rows).toBeGreaterThanOrEqual(6);
    expect(await page.locator('.chart svg rect').count()).toBe(rows);
    await expect(page.locator('.chart svg').getAttribute('role')).resolves.toBe('img');
    await expect(page.locator('#probe-table tbody tr').first().locator('td').nth(1).textContent()).resolves.toBe('ok');
    await expect(page.locator('#tools-title').textContent()).resolves.toBe('Tools (1)');
    await screenshot(page, 'endpoint');
    const missing = await page.goto(`${plaza.url}/marketplace/endpoints/mcp_doesnotexist00`);
    expect(missing?.status()).toBe(404);
  });

  it('validates the listing form inline and explains a conflict', async () => {
    await page.goto(`${plaza.url}/marketplace`);
    await page.getByLabel('Provider slug').fill('Bad Slug!');
    await page.getByRole('button', { name: 'List endpoint' }).click();
    await expect(page.locator('#f-provider').getAttribute('aria-invalid')).resolves.toBe('true');
    await expect(page.locator('#f-url').getAttribute('aria-invalid')).resolves.toBe('true');
    await expect(focusedId(page)).resolves.toBe('f-provider');

    await page.getByLabel('Provider slug').fill('someone-else');
    await page.getByLabel('Streamable-HTTP endpoint URL').fill(fixture.url);
    await page.getByLabel('Your e-mail (accountable publisher)').fill('mallory@example.com');
    await page.getByLabel('Capability summary').fill('Mine now');
    await page.getByRole('button', { name: 'List endpoint' }).click();
    await page.locator('#listing-result.error').waitFor();
    expect(await page.locator('#listing-result').textContent()).toMatch(/already|someone/i);

    // A secret in the summary is refused by the API and shown next to the field.
    await page.getByLabel('Provider slug').fill('leaky');
    await page.getByLabel('Streamable-HTTP endpoint URL').fill('http://127.0.0.1:9/mcp');
    await page.getByLabel('Capability summary').fill('Use token ghp_abcdefghijklmnopqrstuvwxyz0123456789');
    await page.getByRole('button', { name: 'List endpoint' }).click();
    await page.locator('#f-summary[aria-invalid="true"]').waitFor();
    expect(await page.locator('#f-summary-error').isVisible()).toBe(true);
  });

  it("holds the optional fields to the API's limits and says a refusal of one next to it", async () => {
    await page.goto(`${plaza.url}/marketplace`);
    // The fields take what POST /api/mcp/listings takes (they took any length).
    const limits = await page.evaluate(
      `['audience', 'purpose', 'risk'].map((n) => document.getElementById('f-' + n).maxLength)`,
    );
    expect(limits).toEqual([500, 1000, 1000]);
    await page.getByLabel('Provider slug').fill('long-texts');
    await page.getByLabel('Streamable-HTTP endpoint URL').fill('http://127.0.0.1:9/long-texts');
    await page.getByLabel('Your e-mail (accountable publisher)').fill('ops@example.com');
    await page.getByLabel('Capability summary').fill('Long texts.');
    // Past the field's limit only by script; a credential name has no field limit of its own.
    await page.evaluate(`document.getElementById('f-audience').value = 'a'.repeat(501)`);
    await page.getByLabel('Required credential names (optional, comma-separated)').fill(`OK, ${'X'.repeat(101)}`);
    await page.getByRole('button', { name: 'List endpoint' }).click();
    await page.locator('#f-audience[aria-invalid="true"]').waitFor();
    await expect(page.locator('#f-audience-error').textContent()).resolves.toBe('at most 500 characters');
    expect(await page.locator('#f-audience-error').isVisible()).toBe(true);
    await expect(page.locator('#f-required_credentials-error').textContent()).resolves.toBe('at most 100 characters');
    expect(await page.locator('#f-required_credentials-error').isVisible()).toBe(true);
    // Put right, the listing goes through and the old complaints go.
    await page.getByLabel('Audience (optional)').fill('Ops teams');
    await page.getByLabel('Required credential names (optional, comma-separated)').fill('OK');
    await page.getByRole('button', { name: 'List endpoint' }).click();
    await page.locator('#probe-status').waitFor();
    expect(await page.locator('#f-audience-error').isVisible()).toBe(false);
    expect(await page.locator('#f-required_credentials-error').isVisible()).toBe(false);
    await expect(page.locator('#listing-form [aria-invalid="true"]').count()).resolves.toBe(0);
  });

  it("takes a provider's per-agent limits in the listing form, says a refused one at its field, and shows them on the tool cards and the endpoint page", async () => {
    const limited = await startFixtureProvider([
      [{ name: 'quota_probe', description: 'A tool with limits.', inputSchema: { type: 'object', properties: {} } }],
    ]);
    try {
      await page.goto(`${plaza.url}/marketplace`);
      await page.getByLabel('Provider slug').fill('limited-co');
      await page.getByLabel('Streamable-HTTP endpoint URL').fill(limited.url);
      await page.getByLabel('Your e-mail (accountable publisher)').fill('ops@limited.example');
      await page.getByLabel('Capability summary').fill('One tool, held to per-agent limits.');
      await page.getByLabel('Per-agent calls per minute (optional)').fill('10');
      await page.getByLabel('Per-agent calls per day (optional)').fill('0');
      await page.getByRole('button', { name: 'List endpoint' }).click();
      await page.locator('#f-agin_per_day[aria-invalid="true"]').waitFor();
      expect(await page.locator('#f-agin_per_day-error').isVisible()).toBe(true);
      await page.getByLabel('Per-agent calls per day (optional)').fill('500');
      await page.getByRole('button', { name: 'List endpoint' }).click();
      await page.locator('#probe-status[data-status="healthy"]').waitFor({ timeout: 30_000 });
      const [endpoint] = ((await (await fetch(`${plaza.url}/api/mcp/endpoints?provider=limited-co`)).json()) as any)
        .endpoints;
      expect(endpoint.agin_limits).toEqual({ per_minute: 10, per_day: 500 });

      await page.goto(`${plaza.url}/marketplace?provider=limited-co`);
      await expect(page.locator('.tool[data-tool="quota_probe"] .listing-limits').textContent()).resolves.toBe(
        'Per-agent limits: 10 calls per minute, 500 calls per day',
      );
      await page.goto(`${plaza.url}/marketplace/endpoints/${endpoint.id}`);
      await expect(page.locator('#endpoint-facts').textContent()).resolves.toContain(
        'Per-agent limits10 calls per minute, 500 calls per day',
      );
      // A listing without limits says nothing of them.
      await page.goto(`${plaza.url}/marketplace?provider=weather-co`);
      expect(await page.locator('.listing-limits').count()).toBe(0);
      expect(await seriousViolations(page)).toEqual([]);
      expect(errors).toEqual([]);
    } finally {
      await limited.close();
    }
  });

  it.each([
    ['marketplace', '/marketplace'],
    ['endpoint', 'endpoint'],
  ])('%s page has no serious accessibility violations and fits a phone screen', async (name, path) => {
    let url = `${plaza.url}${path}`;
    if (path === 'endpoint') {
      const endpoints = (await (await fetch(`${plaza.url}/api/mcp/endpoints?provider=weather-co`)).json()) as any;
      url = `${plaza.url}/marketplace/endpoints/${endpoints.endpoints[0].id}`;
    }
    await page.goto(url);
    expect(await seriousViolations(page)).toEqual([]);
    await page.setViewportSize(PHONE);
    expect(await overflowsHorizontally(page)).toBe(false);
    if (name === 'marketplace') {
      // The endpoints table is readable: a URL in a line or two, not a letter a line; no column off screen.
      const layout = await tableLayout(page, '#endpoint-table tbody tr');
      expect(layout.codeLines).toBeLessThanOrEqual(2);
      expect(layout.cutOff).toEqual([]);
      expect(await seriousViolations(page)).toEqual([]);
    }
    await screenshot(page, `${name}-phone`);
    await page.setViewportSize(DESKTOP);
    await page.goto(`${url}${url.includes('?') ? '&' : '?'}locale=zh-CN`);
    expect(await seriousViolations(page)).toEqual([]);
    if (name === 'marketplace') await screenshot(page, 'marketplace-zh-CN');
  });
});
