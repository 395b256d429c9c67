/**
 * Pins Plaza's own MCP server (issue 8, spec §4.2/§4.3) with the real MCP SDK client against a
 * running test Plaza: a user signs in with the e-mail link (real SMTP server), creates an API key
 * and an agent from the session; the agent then uses `/mcp/p/platform` and `/mcp`
 * (`platform__<tool>`): `agpk.source.register` records a known-user source for that account,
 * `account_register_link` e-mails a link, `account_password_reset` and `account_auth_options`
 * answer; no tool takes a password; every call leaves a receipt; bad arguments come back in-band.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { BACKENDS } from '../support/databases.ts';
import { startTestPlaza, type TestPlaza } from '../support/plaza.ts';
import { type SmtpSink, startSmtpSink } from '../support/sources.ts';

let smtp: SmtpSink;
beforeAll(async () => {
  smtp = await startSmtpSink();
});
afterAll(async () => {
  await smtp?.close();
});

const source = (over: Record<string, unknown> = {}) => ({
  package_id: 'com.example.viamcp',
  name: 'Via MCP',
  version: '1.0.0',
  summary: 'Registered by an agent.',
  vendor_name: 'Example Inc',
  download_uri: 'https://downloads.example.com/viamcp-1.0.0.agpk',
  sha256: 'd'.repeat(64),
  ...over,
});

describe.each(BACKENDS)('platform MCP tools on %s', (backend) => {
  let plaza: TestPlaza;
  let agentToken: string;
  let accountId: string;
  const email = `mcp-user-${backend}@example.com`;

  beforeAll(async () => {
    plaza = await startTestPlaza(backend, { env: { SMTP_URL: smtp.url } });
    // Sign in with the e-mail link, as a person would.
    await fetch(`${plaza.url}/api/auth/email/register-link`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email }),
    });
    const mail = await smtp.waitFor((m) => m.to.includes(email));
    const token = new URL(/(http\S+\/sign-in\?token=\S+)/.exec(mail.text)![1]!).searchParams.get('token');
    const signed = await fetch(`${plaza.url}/api/auth/email/verify`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token }),
    });
    const session = (await signed.json()) as any;
    accountId = session.account.id;
    const cookie = signed.headers
      .getSetCookie()
      .map((c) => c.split(';')[0])
      .join('; ');
    const key = (await (
      await fetch(`${plaza.url}/api/account/keys`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', cookie, 'x-csrf-token': session.session.csrf_token },
        body: '{"name":"agents"}',
      })
    ).json()) as any;
    const agent = await fetch(`${plaza.url}/api/agents`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key.api_key}` },
      body: JSON.stringify({ display_name: 'Publisher agent' }),
    });
    expect(agent.status).toBe(201);
    agentToken = ((await agent.json()) as any).data.token;
  });
  afterAll(async () => {
    await plaza?.close();
  });

  async function connect(path: string): Promise<Client> {
    const client = new Client({ name: 'platform-test', version: '1' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${plaza.url}${path}`), {
        requestInit: { headers: { authorization: `Bearer ${agentToken}` } },
      }),
    );
    return client;
  }

  it('offers no GET notification stream (it sends no server-initiated message): 405, as /mcp', async () => {
    const res = await fetch(`${plaza.url}/mcp/p/platform`, {
      headers: { authorization: `Bearer ${agentToken}`, accept: 'text/event-stream' },
      signal: AbortSignal.timeout(5_000),
    });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('POST');
    await res.body?.cancel();
  });

  it('answers params a method refuses with -32602 naming the field, as any connector would', async () => {
    const res = await fetch(`${plaza.url}/mcp/p/platform`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${agentToken}`,
        accept: 'application/json, text/event-stream',
        'content-type': 'application/json',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { cursor: {} } }),
    });
    expect(res.status).toBe(200);
    const answer = JSON.parse(/^data: (.+)$/m.exec(await res.text())![1]!);
    expect(answer).toMatchObject({
      id: 1,
      error: {
        code: -32602,
        message: expect.stringMatching(/^Invalid params for tools\/list: params\.cursor: [^\n]+$/),
      },
    });
  });

  it('lists the four tools on /mcp/p/platform, none taking a password', async () => {
    const client = await connect('/mcp/p/platform');
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual([
        'account_auth_options',
        'account_password_reset',
        'account_register_link',
        'agpk.source.register',
      ]);
      for (const t of tools) expect(JSON.stringify(t.inputSchema)).not.toMatch(/password/i);
      expect(tools.find((t) => t.name === 'agpk.source.register')!.inputSchema.required).toEqual(
        expect.arrayContaining(['package_id', 'download_uri', 'sha256']),
      );
    } finally {
      await client.close();
    }
  });

  it("registers a source as a known user of the agent's account through agpk.source.register", async () => {
    const client = await connect('/mcp/p/platform');
    try {
      const result = (await client.callTool({ name: 'agpk.source.register', arguments: source() })) as any;
      expect(result.isError ?? false).toBe(false);
      expect(result.structuredContent.source).toMatchObject({
        trust: 'known-user',
        status: 'registered',
        package_id: 'com.example.viamcp',
      });
      expect(result._meta.platform.agin_id).toMatch(/./);
      const row = await plaza.db.prisma.packageSource.findUnique({ where: { id: result.structuredContent.source.id } });
      expect(row).toMatchObject({ trust: 'known-user', accountId });
      const bad = (await client.callTool({
        name: 'agpk.source.register',
        arguments: source({ sha256: 'e'.repeat(63) }),
      })) as any;
      expect(bad.isError).toBe(true);
      expect(JSON.stringify(bad.content)).toMatch(/sha256/);
    } finally {
      await client.close();
    }
  });

  it('wraps the account routes: register link (mail arrives), password reset, auth options', async () => {
    const client = await connect('/mcp/p/platform');
    try {
      const other = `invited-${backend}@example.com`;
      const sent = (await client.callTool({ name: 'account_register_link', arguments: { email: other } })) as any;
      expect(sent.isError ?? false).toBe(false);
      expect((await smtp.waitFor((m) => m.to.includes(other))).text).toMatch(/\/sign-in\?token=lnk_/);
      const reset = (await client.callTool({
        name: 'account_password_reset',
        arguments: { email: `nobody-${backend}@example.com` },
      })) as any;
      expect(reset.structuredContent.status).toBe('sent');
      const options = (await client.callTool({ name: 'account_auth_options', arguments: {} })) as any;
      expect(options.structuredContent).toMatchObject({
        methods: { email_link: true, password: true },
        email_delivery: 'smtp',
      });
    } finally {
      await client.close();
    }
  });

  it('sends one address at most 5 e-mails a minute, counted with the HTTP routes: no agent floods an inbox', async () => {
    const client = await connect('/mcp/p/platform');
    const victim = `flooded-${backend}@example.com`;
    try {
      const answers = [];
      for (let i = 0; i < 6; i++)
        answers.push(
          (await client.callTool({
            name: i % 2 ? 'account_password_reset' : 'account_register_link',
            arguments: { email: victim },
          })) as any,
        );
      expect(answers.slice(0, 5).map((a) => a.isError ?? false)).toEqual([false, false, false, false, false]);
      expect(answers[5]).toMatchObject({
        isError: true,
        content: [
          {
            type: 'text',
            text: expect.stringMatching(/^Too many requests for this e-mail address; retry after \d+ s\.$/),
          },
        ],
      });
      // The same count as the HTTP route's: the address is used up there too (its case aside).
      const http = await fetch(`${plaza.url}/api/auth/email/register-link`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: victim.toUpperCase() }),
      });
      expect(http.status).toBe(429);
      await new Promise((r) => setTimeout(r, 500));
      // Three links were e-mailed (resets go only to accounts with a password, which it has not).
      expect(smtp.messages.filter((m) => m.to.includes(victim))).toHaveLength(3);
    } finally {
      await client.close();
    }
  });

  it('receipts every tools/call on /mcp/p/platform, an unknown tool and arguments the tool refuses too', async () => {
    const client = await connect('/mcp/p/platform');
    try {
      const calls = [
        { name: 'account_nope', arguments: {} },
        { name: 'agpk.source.register', arguments: { package_id: 'x' } },
        { name: 'account_auth_options', arguments: { surplus: true } },
      ];
      for (const call of calls) {
        const result = (await client.callTool(call)) as any;
        expect(result.isError).toBe(true);
        const callId = result._meta?.platform?.call_id;
        expect(callId, call.name).toMatch(/^call_/);
        const receipt = await plaza.db.prisma.receipt.findUnique({ where: { callId } });
        expect(receipt, call.name).toMatchObject({ provider: 'platform', tool: call.name, status: 'error' });
      }
      // A name no receipt can hold is refused as a request (as on every connector), not called.
      const before = await plaza.db.prisma.receipt.count({ where: { provider: 'platform' } });
      for (const name of ['', 'a'.repeat(301)])
        await expect(client.callTool({ name, arguments: {} })).rejects.toThrow(/must be 1 to 300 characters/);
      expect(await plaza.db.prisma.receipt.count({ where: { provider: 'platform' } })).toBe(before);
    } finally {
      await client.close();
    }
  });

  it('offers the same tools on /mcp as platform__<tool>, each call leaving a receipt', async () => {
    const before = await plaza.db.prisma.receipt.count({ where: { provider: 'platform' } });
    const client = await connect('/mcp');
    try {
      const names = (await client.listTools()).tools.map((t) => t.name);
      expect(names).toEqual(
        expect.arrayContaining([
          'platform__agpk.source.register',
          'platform__account_register_link',
          'platform__account_password_reset',
          'platform__account_auth_options',
        ]),
      );
      const result = (await client.callTool({
        name: 'platform__agpk.source.register',
        arguments: source({ version: '2.0.0' }),
      })) as any;
      expect(result.isError ?? false).toBe(false);
      expect(JSON.parse(result.content[0].text).source.version).toBe('2.0.0');
    } finally {
      await client.close();
    }
    // Receipts are written in sync mode before the result returns.
    expect(await plaza.db.prisma.receipt.count({ where: { provider: 'platform' } })).toBeGreaterThan(before);
  });

  it('refuses callers without an agent credential', async () => {
    const res = await fetch(`${plaza.url}/mcp/p/platform`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(res.status).toBe(401);
  });
});
