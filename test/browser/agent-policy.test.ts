/**
 * Issue 35's "Done when", end to end: two real `plaza serve` instances on one PostgreSQL and one
 * Redis; an account holder signs in on the Account page in Chromium and restricts an agent to two
 * tools of a local provider and 100 calls a day. Through `/mcp` of either instance the agent (SDK
 * v1 client) sees only those two tools; a third is refused in-band and never reaches the provider;
 * 100 calls, spread over both instances, pass; the 101st is refused in-band on each instance
 * (naming the limit, with retryAfterS) and receipted as rate_limited, which the Receipts page
 * filters and shows with its reason. No serious axe violations on the policy panel.
 * Runs only with Chromium and TEST_DATABASE_URL and TEST_REDIS_URL.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Redis } from 'ioredis';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { randomToken } from '../../src/kernel/index.ts';
import { CHROMIUM_PATH, freshPage, launchChromium, seriousViolations, waitUntil } from '../support/browser.ts';
import { runPlaza, type ServerProcess, startPlazaServer } from '../support/cli.ts';
import { createPostgresDatabase } from '../support/databases.ts';
import { type SdkUpstream, startSdkUpstream } from '../support/mcp-upstreams.ts';
import { signInThroughLink } from '../support/sign-in.ts';
import { type SmtpSink, startSmtpSink } from '../support/sources.ts';

const DATABASE = process.env['TEST_DATABASE_URL'];
const REDIS = process.env['TEST_REDIS_URL'];
const PER_DAY = 100;

/** A tools/call result as the SDK client returns it. */
interface CallResult {
  isError?: boolean;
  content?: Array<{ type: string; text?: string }>;
  _meta?: Record<string, unknown>;
}

const textOf = (result: CallResult) => (result.content ?? []).map((c) => c.text ?? '').join('\n');

(CHROMIUM_PATH === null || !DATABASE || !REDIS ? describe.skip : describe)(
  'an agent restricted to two tools and 100 calls a day from the Account page, on two instances',
  () => {
    let database: { url: string; drop(): Promise<void> };
    let smtp: SmtpSink;
    let upstream: SdkUpstream;
    let a: ServerProcess;
    let b: ServerProcess;
    let browser: Browser;
    let context: BrowserContext | undefined;
    let page: Page;
    let errors: string[];
    const clients: Client[] = [];
    const prefix = `plaza-policy:${randomToken(8)}:`;
    let agentToken = '';
    let agentId = '';
    let apiKey = '';

    beforeAll(async () => {
      database = await createPostgresDatabase(DATABASE, 'plaza_policy');
      [smtp, upstream, browser] = await Promise.all([startSmtpSink(), startSdkUpstream(), launchChromium()]);
      const env = {
        DATABASE_URL: database.url,
        REDIS_URL: REDIS!,
        PLAZA_RATE_LIMIT_KEY_PREFIX: prefix,
        PLAZA_ALLOW_PRIVATE_TARGETS: '1',
        PLAZA_PROBE_BASE_INTERVAL_S: '5',
        SMTP_URL: smtp.url,
        MAIL_FROM: 'Plaza <plaza@test.example>',
        LOG_LEVEL: 'info',
      };
      const migrated = await runPlaza(['migrate'], env);
      expect(migrated.code, migrated.stderr).toBe(0);
      [a, b] = await Promise.all([startPlazaServer(env), startPlazaServer(env)]);
      ({ context, page, errors } = await freshPage(browser, undefined));
    }, 120_000);

    afterAll(async () => {
      await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
      await browser?.close();
      for (const server of [a, b]) server?.child.kill('SIGKILL');
      await Promise.all([a?.exited, b?.exited]);
      await upstream?.close();
      await smtp?.close();
      await database?.drop();
      const redis = new Redis(REDIS!);
      const keys = await redis.keys(`${prefix}*`);
      if (keys.length > 0) await redis.del(...keys);
      await redis.quit();
    }, 60_000);

    /** An SDK v1 client of `/mcp` on `server`, as the agent. */
    async function agentClient(server: ServerProcess): Promise<Client> {
      const client = new Client({ name: 'policy-test', version: '1.0.0' });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
          requestInit: { headers: { authorization: `Bearer ${agentToken}` } },
        }),
      );
      clients.push(client);
      return client;
    }

    const listed = async (client: Client) => (await client.listTools()).tools.map((t) => t.name).sort();
    const upstreamCalls = (tool: string) =>
      upstream.seen.filter((s) => s.body?.method === 'tools/call' && s.body?.params?.name === tool).length;

    it('signs in on the Account page, creates an agent and an API key, and lists the provider', async () => {
      await signInThroughLink(page, a.url, smtp, 'owner@example.com');

      await page.getByRole('button', { name: 'Create API key' }).click();
      apiKey = (await page.locator('#new-key').textContent())!;
      expect(apiKey).toMatch(/^plz_/);
      await page.getByLabel('Display name').fill('Support bot');
      await page.getByRole('button', { name: 'Create agent' }).click();
      agentToken = (await page.locator('#new-agent-token').textContent())!;
      expect(agentToken).toMatch(/^agt_/);
      await page.locator('#agent-list li[data-agent-id]').first().waitFor();
      agentId = (await page.locator('#agent-list li[data-agent-id]').first().getAttribute('data-agent-id'))!;

      const listing = await fetch(`${a.url}/api/mcp/listings`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
        body: JSON.stringify({
          provider: 'sdk',
          url: upstream.url,
          registered_by: 'owner@example.com',
          agin_support: true,
          summary: 'SDK provider; no credentials; logs agin_id.',
        }),
      });
      expect(listing.status).toBe(201);
      // Before any policy the agent sees every tool of the provider, on both instances.
      for (const server of [a, b]) {
        const client = await agentClient(server);
        await expect
          .poll(() => listed(client), { timeout: 30_000 })
          .toEqual(expect.arrayContaining(['sdk__echo', 'sdk__slow', 'sdk__tick']));
      }
    });

    it('restricts the agent to two tools and 100 calls a day from its "Policy and limits"', async () => {
      const panel = page.locator(`#agent-list li[data-agent-id="${agentId}"] details.policy`);
      await panel.locator('summary').click();
      await panel.locator('.usage').waitFor();
      for (const tool of ['echo', 'slow']) {
        const before = await panel.locator('.policy-rules li').count();
        await panel.getByLabel('Provider', { exact: true }).fill('sdk');
        await panel.getByLabel('Tool', { exact: true }).fill(tool);
        await panel.getByRole('button', { name: 'Add rule' }).click();
        await expect.poll(() => panel.locator('.policy-rules li').count()).toBe(before + 1);
      }
      await panel.getByLabel('Calls per day').fill(String(PER_DAY));
      await panel.getByRole('button', { name: 'Save default and limits' }).click();
      await expect.poll(() => panel.locator('.usage-row[data-limit="100"]').count()).toBe(1);
      await expect(panel.locator('.policy-rules li').allTextContents()).resolves.toEqual([
        'Allow sdk / echo Remove',
        'Allow sdk / slow Remove',
      ]);
      expect(await seriousViolations(page)).toEqual([]);

      // What the page saved is the agent's policy, as the API (and `plaza agents policy show`) has it.
      const saved = await fetch(`${b.url}/api/agents/${agentId}/policy`, {
        headers: { authorization: `Bearer ${apiKey}` },
      });
      expect(((await saved.json()) as any).data.policy).toMatchObject({
        rules: [
          { effect: 'allow', provider: 'sdk', tool: 'echo' },
          { effect: 'allow', provider: 'sdk', tool: 'slow' },
        ],
        limits: { per_day: PER_DAY },
      });
    });

    it('lists only those two tools on /mcp of either instance, within 5 s', async () => {
      for (const client of clients)
        await expect.poll(() => listed(client), { timeout: 5_000 }).toEqual(['sdk__echo', 'sdk__slow']);
    });

    it('refuses a third tool in-band, without calling the provider', async () => {
      const before = upstreamCalls('tick');
      for (const client of clients) {
        const result = (await client.callTool({ name: 'sdk__tick', arguments: { ms: 60_000 } })) as CallResult;
        expect(result.isError, JSON.stringify(result)).toBe(true);
        expect(textOf(result)).toMatch(/denied/i);
        expect(textOf(result)).toContain('sdk/tick');
      }
      expect(upstreamCalls('tick')).toBe(before);
    });

    it('passes 100 calls spread over both instances, then refuses the 101st on each, in-band and receipted', async () => {
      const [first, second] = clients as [Client, Client];
      const before = upstreamCalls('echo') + upstreamCalls('slow');
      for (let i = 0; i < PER_DAY; i++) {
        const client = i % 2 === 0 ? first : second;
        const result = (await (i % 5 === 4
          ? client.callTool({ name: 'sdk__slow', arguments: { ms: 0 } })
          : client.callTool({ name: 'sdk__echo', arguments: { message: `call ${i}` } }))) as CallResult;
        expect(result.isError ?? false, `call ${i + 1}: ${JSON.stringify(result)}`).toBe(false);
      }
      expect(upstreamCalls('echo') + upstreamCalls('slow') - before).toBe(PER_DAY);
      for (const client of [first, second]) {
        const refused = (await client.callTool({
          name: 'sdk__echo',
          arguments: { message: 'one too many' },
        })) as CallResult;
        expect(refused.isError, JSON.stringify(refused)).toBe(true);
        expect(textOf(refused)).toMatch(/100/);
        expect(textOf(refused)).toMatch(/day/i);
        expect(textOf(refused)).toMatch(/retry in \d+ s/i);
        expect(JSON.stringify(refused._meta ?? {})).toMatch(/"retryAfterS":\d+/);
      }
      expect(upstreamCalls('echo') + upstreamCalls('slow') - before).toBe(PER_DAY);

      const receipts = await fetch(`${b.url}/api/receipts?status=rate_limited`, {
        headers: { authorization: `Bearer ${apiKey}` },
      });
      expect(receipts.status).toBe(200);
      const refusals = ((await receipts.json()) as any).data.receipts as Array<{ status: string; outcome: string }>;
      expect(refusals).toHaveLength(2);
      for (const r of refusals) {
        expect(r.status).toBe('rate_limited');
        expect(r.outcome).toMatch(/^refused by Plaza: /);
      }
    });

    it('shows the refusals with their reason on the Receipts page, filtered by status', async () => {
      await page.goto(`${a.url}/receipts`);
      await page.getByLabel('Account API key').fill(apiKey);
      await page.getByLabel('Status').selectOption('rate_limited');
      await page.getByRole('button', { name: 'Search receipts' }).click();
      await waitUntil(page, `document.querySelectorAll('#receipt-table tbody tr[data-status]').length === 2`);
      const rows = page.locator('#receipt-table tbody tr[data-status]');
      for (const n of [0, 1]) {
        await expect(rows.nth(n).getAttribute('data-status')).resolves.toBe('rate_limited');
        await expect(rows.nth(n).textContent()).resolves.toMatch(/refused by Plaza: /);
      }
      await page.getByLabel('Status').selectOption('denied');
      await page.getByRole('button', { name: 'Search receipts' }).click();
      await waitUntil(page, `document.querySelectorAll('#receipt-table tbody tr[data-status="denied"]').length === 2`);
      expect(await seriousViolations(page)).toEqual([]);

      // Back on the Account page the agent's panel shows the day used up.
      await page.goto(`${a.url}/account`);
      const panel = page.locator(`#agent-list li[data-agent-id="${agentId}"] details.policy`);
      await panel.locator('summary').click();
      await expect
        .poll(async () => Number(await panel.locator('.usage-row[data-limit="100"]').getAttribute('data-used')))
        .toBeGreaterThanOrEqual(PER_DAY);
      expect(errors).toEqual([]);
      await context?.close();
    });
  },
);
